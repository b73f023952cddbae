package monocleconfig

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParsesDate is whether parseDateValue (src/Monocle/Prelude.hs) reads s: the
// config's update_since, the janitor's --commit-date. The first of
// parseTimeM False defaultTimeLocale "%F", "%F %T %Z" and "%FT%XZ" that
// succeeds. It follows the time library (1.12.2, GHC 9.6's) in
// lib/Data/Time/Format/Parse/Class.hs and Instances.hs: %Y is an optional
// '-', optional spaces, then one or more digits (any year); %m %d %H %M %S
// are exactly two digits, in range; a space in the format matches one or
// more spaces; literal letters match either case; the day must exist.
func ParsesDate(s string) bool {
	for _, layout := range []func(*dateScanner) bool{dateOnly, dateTimeZone, dateTimeZulu} {
		p := &dateScanner{s: s}
		if layout(p) && p.i == len(p.s) {
			return true
		}
	}
	return false
}

// "%F" is "%Y-%m-%d".
func dateOnly(p *dateScanner) bool { return p.date() }

// "%F %T %Z": date, spaces, %H:%M:%S, spaces, a zone name or offset.
func dateTimeZone(p *dateScanner) bool {
	return p.date() && p.spaces() && p.time() && p.spaces() && p.zone()
}

// "%FT%XZ": %X is defaultTimeLocale's timeFmt, "%H:%M:%S".
func dateTimeZulu(p *dateScanner) bool {
	return p.date() && p.literal('T') && p.time() && p.literal('Z')
}

type dateScanner struct {
	s string
	i int
}

func (p *dateScanner) peek() (rune, int) { return utf8.DecodeRuneInString(p.s[p.i:]) }

// literal is charCI: a format character matches itself in either case.
func (p *dateScanner) literal(c rune) bool {
	if p.i >= len(p.s) {
		return false
	}
	r, size := p.peek()
	if unicode.ToUpper(r) != unicode.ToUpper(c) {
		return false
	}
	p.i += size
	return true
}

// isHaskellSpace is Data.Char.isSpace: \t..\r, space, no-break space, and
// the Zs category (not U+0085, U+2028 or U+2029, which Go counts as spaces).
func isHaskellSpace(r rune) bool {
	return r == ' ' || '\t' <= r && r <= '\r' || r == 0xA0 || unicode.Is(unicode.Zs, r)
}

// skipSpaces is ReadP's skipSpaces.
func (p *dateScanner) skipSpaces() {
	for p.i < len(p.s) {
		r, size := p.peek()
		if !isHaskellSpace(r) {
			return
		}
		p.i += size
	}
}

// spaces is a space in the format: one space, then any more.
func (p *dateScanner) spaces() bool {
	if p.i >= len(p.s) {
		return false
	}
	if r, _ := p.peek(); !isHaskellSpace(r) {
		return false
	}
	p.skipSpaces()
	return true
}

func (p *dateScanner) digits(n int) (int, bool) {
	if p.i+n > len(p.s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if !isDecimal(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v, true
}

// year is %Y: its value matters only as leap or not, so it returns the
// year modulo 400 (Haskell's mod is never negative, as here).
func (p *dateScanner) year() (int, bool) {
	negative := p.i < len(p.s) && p.s[p.i] == '-'
	if negative {
		p.i++
	}
	p.skipSpaces()
	start := p.i
	mod := 0
	for p.i < len(p.s) && isDecimal(p.s[p.i]) {
		mod = (mod*10 + int(p.s[p.i]-'0')) % 400
		p.i++
	}
	if p.i == start {
		return 0, false
	}
	if negative {
		mod = (400 - mod) % 400
	}
	return mod, true
}

func (p *dateScanner) date() bool {
	year, ok := p.year()
	if !ok || !p.literal('-') {
		return false
	}
	month, ok := p.digits(2)
	if !ok || month < 1 || month > 12 || !p.literal('-') {
		return false
	}
	day, ok := p.digits(2)
	if !ok || day < 1 {
		return false
	}
	// fromGregorianValid
	leap := year%4 == 0 && (year%100 != 0 || year == 0)
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
	if month == 2 && leap {
		days = 29
	}
	return day <= days
}

// time is "%H:%M:%S": hours 0-23, minutes 0-59, seconds 0-60.
func (p *dateScanner) time() bool {
	h, ok := p.digits(2)
	if !ok || h > 23 || !p.literal(':') {
		return false
	}
	m, ok := p.digits(2)
	if !ok || m > 59 || !p.literal(':') {
		return false
	}
	sec, ok := p.digits(2)
	return ok && sec <= 60
}

// zone is %Z read as a TimeZone: letters (munch1 isAlpha) naming a zone of
// defaultTimeLocale, "UTC", or a one-letter military zone; else a numeric
// offset +HHMM or +HH:MM (any digits).
func (p *dateScanner) zone() bool {
	if r, _ := p.peek(); p.i < len(p.s) && unicode.IsLetter(r) {
		start := p.i
		for p.i < len(p.s) {
			r, size := p.peek()
			if !unicode.IsLetter(r) {
				break
			}
			p.i += size
		}
		return knownZone(p.s[start:p.i])
	}
	if p.i >= len(p.s) || (p.s[p.i] != '+' && p.s[p.i] != '-') {
		return false
	}
	p.i++
	if _, ok := p.digits(2); !ok {
		return false
	}
	if p.i < len(p.s) && p.s[p.i] == ':' {
		p.i++
	}
	_, ok := p.digits(2)
	return ok
}

func knownZone(name string) bool {
	upper := strings.Map(unicode.ToUpper, name)
	switch upper {
	case "UT", "GMT", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT":
		return true
	}
	if name == "UTC" {
		return true
	}
	// getMilZone: one letter, A-Z but J, once uppercased.
	if r, size := utf8.DecodeRuneInString(upper); size == len(upper) && utf8.RuneCountInString(name) == 1 {
		return 'A' <= r && r <= 'Z' && r != 'J'
	}
	return false
}
