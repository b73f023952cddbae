// Package printable is the one way the project shows a value it did not
// choose (a Monocle's names, its config, what a file or the API server
// holds) in a message: a status condition, what check and render print,
// a CLI's error, a Job's comments. A terminal acts on control characters
// instead of showing them (ESC starts a sequence that can move the cursor,
// rewrite a line or write the clipboard; CR and newline forge lines) and
// bidi controls reorder what is shown around them; escaped, they are only
// text. It imports only the standard library: every part may use it.
package printable

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape writes each character of s that a terminal would act on, or that
// would reorder or break what is shown, as its Go escape (\x1b, \n,
// \u202e), and each byte that is not UTF-8 as \xNN: the C0 controls, DEL,
// the C1 controls, the bidi embeddings, overrides and isolates, and the
// line and paragraph separators. Everything else is kept as it is, so that
// a message stays readable in any language.
func Escape(s string) string {
	i := unsafeAt(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case unsafeRune(r):
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is s with each of its lines escaped and its newlines kept: for a
// text that means its lines (a usage, a Job's comments) and shows values.
func Lines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, line := range lines {
		text, nl := strings.CutSuffix(line, "\n")
		lines[i] = Escape(text)
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// Quote is s in double quotes, escaped as Go quotes a string: every
// character Escape escapes (and any other that is not printable), the
// quote and the backslash. A quoted value cannot end its quotes early.
func Quote(s string) string { return strconv.Quote(s) }

// Quoted is JSON, or YAML whose strings holding such characters are
// double-quoted, with each character Escape escapes that encoding/json and
// YAML's emitters leave as it is (DEL, the C1 controls, the bidi controls,
// the separators; both escape the C0 controls themselves) written as its
// \uXXXX escape, which both read back as that character: the same values,
// and nothing a terminal acts on. Such characters only occur in strings
// there; elsewhere an escape would not be read back, so text of another
// kind is not for Quoted.
func Quoted(text []byte) []byte {
	var b []byte
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		if r >= 0x7f && unsafeRune(r) {
			if b == nil {
				b = append(make([]byte, 0, len(text)+16), text[:i]...)
			}
			b = append(b, `\u`...)
			b = append(b, fmt.Sprintf("%04x", r)...)
		} else if b != nil {
			b = append(b, text[i:i+size]...)
		}
		i += size
	}
	if b == nil {
		return text
	}
	return b
}

// Clean reports whether s has nothing Escape would escape.
func Clean(s string) bool { return unsafeAt(s) < 0 }

// unsafeAt is the index of the first byte of s that Escape escapes, or -1.
func unsafeAt(s string) int {
	for i, r := range s {
		if unsafeRune(r) || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return i
		}
	}
	return -1
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}
