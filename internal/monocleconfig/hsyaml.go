package monocleconfig

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Two places where yaml.v3 reads YAML otherwise than HsYAML, given back
// here on the text yaml.v3 reads (UTF-8, without a byte order mark).

// asYAML11 rewrites a "%YAML 1.x" directive, which HsYAML accepts for any
// minor version (src/Data/YAML/Event.hs, goDir1: a major of 1 read by
// readMaybe), into "%YAML 1.1", the one version yaml.v3 accepts, padded
// with spaces so that every position in the text stays where it was. Only
// the directives before the document are read; text is copied only when a
// directive is rewritten.
func asYAML11(text []byte) []byte {
	out, copied := text, false
	for offset := 0; offset < len(text); {
		line, next := cutLine(text[offset:])
		switch {
		case len(line) > 0 && line[0] == '%':
			if v := yamlDirective.FindSubmatchIndex(line); v != nil && string(line[v[2]:v[3]]) != "1.1" {
				if !copied {
					out, copied = bytes.Clone(text), true
				}
				copy(out[offset+v[2]:], "1.1"+strings.Repeat(" ", v[3]-v[2]-3))
			}
		case len(bytes.TrimLeft(line, " \t")) == 0 || bytes.TrimLeft(line, " \t")[0] == '#':
		default:
			return out // the document starts ("---" or content)
		}
		offset += next
	}
	return out
}

// yamlDirective is a %YAML directive line whose version HsYAML reads with
// a major of 1 (digits "." digits), the version in its first submatch.
var yamlDirective = regexp.MustCompile(`^%YAML[ \t]+(0*1\.[0-9]+)(?:[ \t]|$)`)

// cutLine returns the first line of text (without its break) and the
// offset, in text, of the next one. Breaks are yaml.v3's, CR LF being one.
func cutLine(text []byte) (line []byte, next int) {
	for i := 0; i < len(text); i++ {
		if n := breakAt(text, i); n > 0 {
			return text[:i], i + n
		}
	}
	return text, len(text)
}

// breakAt is the length of the line break at text[i], or 0: yaml.v3's
// is_break (CR, LF, NEL, LS, PS), with CR LF one break (skip_line).
func breakAt(text []byte, i int) int {
	switch text[i] {
	case '\r':
		if i+1 < len(text) && text[i+1] == '\n' {
			return 2
		}
		return 1
	case '\n':
		return 1
	case 0xC2:
		if i+1 < len(text) && text[i+1] == 0x85 {
			return 2
		}
	case 0xE2:
		if i+2 < len(text) && text[i+1] == 0x80 && (text[i+2] == 0xA8 || text[i+2] == 0xA9) {
			return 3
		}
	}
	return 0
}

// markNonSpecific gives back the non-specific tag "!" that yaml.v3 drops
// from a plain scalar (parser.node: the tag "!" is read as no tag): HsYAML
// reads `! 12`, `! true` or a lone `!` as strings. A scalar yaml.v3 left
// untagged whose text starts with "!" and a blank (before or after its
// anchor, if any) gets the tag !!str. Nodes are visited in the text's order, so the
// positions are found in one pass over it.
func markNonSpecific(root *yaml.Node, text []byte) {
	if !hasLoneBang(text) {
		return
	}
	pos := positions{text: text, line: 1, column: 1}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.ScalarNode:
			if n.Style != 0 || n.Tag == tagStr {
				return // tagged, quoted or block, or a string anyway
			}
			at := pos.offset(n.Line, n.Column)
			if n.Anchor != "" && at < len(text) && text[at] == '&' {
				at = skipBlanks(text, at+1+len(n.Anchor))
			}
			if at < len(text) && text[at] == '!' && (at+1 == len(text) || isBlankOrBreak(text, at+1)) {
				n.Tag, n.Style = tagStr, yaml.TaggedStyle
			}
		case yaml.DocumentNode, yaml.SequenceNode, yaml.MappingNode:
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(root)
}

// hasLoneBang: text holds a "!" followed by a blank, a break or its end.
func hasLoneBang(text []byte) bool {
	for i, c := range text {
		if c == '!' && (i+1 == len(text) || isBlankOrBreak(text, i+1)) {
			return true
		}
	}
	return false
}

func isBlankOrBreak(text []byte, i int) bool {
	return text[i] == ' ' || text[i] == '\t' || breakAt(text, i) > 0
}

// skipBlanks skips the separation from text[i]: blanks, breaks, and
// comments (a "#" after a blank or a break, to the line's end).
func skipBlanks(text []byte, i int) int {
	for i < len(text) {
		switch {
		case isBlankOrBreak(text, i):
			i++
		case text[i] == '#' && i > 0 && isBlankOrBreak(text, i-1):
			for i < len(text) && breakAt(text, i) == 0 {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// positions turns yaml.v3's node positions (1-based lines, and columns in
// characters) into byte offsets, moving forward from the last one found:
// linear over the text for positions asked in order.
type positions struct {
	text         []byte
	line, column int
	at           int // the byte offset of line and column
}

func (p *positions) offset(line, column int) int {
	if line < p.line || line == p.line && column < p.column {
		*p = positions{text: p.text, line: 1, column: 1} // not in order: start over
	}
	for p.line < line && p.at < len(p.text) {
		if n := breakAt(p.text, p.at); n > 0 {
			p.at += n
			p.line, p.column = p.line+1, 1
			continue
		}
		p.at++
	}
	for p.column < column && p.at < len(p.text) && breakAt(p.text, p.at) == 0 {
		_, size := utf8.DecodeRune(p.text[p.at:])
		p.at += size
		p.column++
	}
	return p.at
}
