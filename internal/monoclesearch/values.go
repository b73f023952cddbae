package monoclesearch

import (
	"strings"
	"time"
)

// Query.hs' `loadAliases` compiles each alias as if the time were
// fakeNow, so which relative dates load is fixed: a date before
// 1970-01-01 ("Date is too old") is an error, e.g. now-52years.
var (
	fakeNow    = time.Date(2021, time.June, 2, 23, 0, 0, 0, time.UTC)
	epochHours = uint64(fakeNow.Unix() / 3600)  // now-Nhours: fakeNow minus N*3600 s
	epochDays  = uint64(fakeNow.Unix() / 86400) // now-Ndays moves the date, keeps 23:00
)

// oldestRelative is, per unit of Query.hs' `timeRangeReader`, the largest
// count whose date is not before 1970-01-01.
var oldestRelative = map[string]uint64{
	"hour":  epochHours,
	"day":   epochDays,
	"week":  epochDays / 7,
	"month": uint64(fakeNow.Year()-1970)*12 + uint64(fakeNow.Month()-1), // addGregorianMonthsClip
	"year":  uint64(fakeNow.Year() - 1970),                              // addGregorianYearsClip
}

// checkDate is Query.hs' `mkRangeValue` for a date field: the value is a
// relative date or else an absolute one, and not before 1970. It returns
// Monocle's message, "" when the value loads.
func checkDate(v string) string {
	parsed, old := relativeDate(v)
	if !parsed {
		parsed, old = absoluteDate(v)
	}
	switch {
	case !parsed:
		return "Invalid date: " + v
	case old:
		return "Date is too old: " + v
	}
	return ""
}

// relativeDate is Query.hs' `relTimeReader` run by `readMaybe`: "now", or
// "now-" digits unit ["s"], where unit is hour, day, week, month or year;
// trailing spaces (readMaybe skips them) are allowed, leading ones are not.
// The count is read as a Haskell Word, so it wraps at 2^64 (readDecP).
func relativeDate(v string) (parsed, old bool) {
	rest, ok := strings.CutPrefix(strings.TrimRightFunc(v, isHaskellSpace), "now")
	if !ok {
		return false, false
	}
	if rest == "" {
		return true, false
	}
	rest, ok = strings.CutPrefix(rest, "-")
	if !ok {
		return false, false
	}
	var count uint64
	digits := 0
	for digits < len(rest) && isDigit(rune(rest[digits])) {
		count = count*10 + uint64(rest[digits]-'0')
		digits++
	}
	if digits == 0 {
		return false, false
	}
	rest = rest[digits:]
	for unit, oldest := range oldestRelative {
		if r, ok := strings.CutPrefix(rest, unit); ok && (r == "" || r == "s") {
			return true, count > oldest
		}
	}
	return false, false
}

// absoluteDate is Query.hs' `parseDateValue`: Data.Time's parseTimeM with
// "%F", then "%Y-%m", then "%Y", no surrounding spaces. %Y is an optional
// '-', optional spaces (its space padding) and any number of digits; %m and
// %d are two digits each, and the date must exist (fromGregorianValid).
func absoluteDate(v string) (parsed, old bool) {
	rs := []rune(v)
	negative := len(rs) > 0 && rs[0] == '-'
	i := 0
	if negative {
		i = 1
	}
	i = skipSpaces(rs, i)
	yearStart := i
	for i < len(rs) && isDigit(rs[i]) {
		i++
	}
	if i == yearStart {
		return false, false
	}
	year := strings.TrimLeft(string(rs[yearStart:i]), "0")
	month, day := 1, 1
	rest := rs[i:]
	twoDigits := func(rs []rune) (int, bool) {
		if len(rs) < 3 || rs[0] != '-' || !isDigit(rs[1]) || !isDigit(rs[2]) {
			return 0, false
		}
		return int(rs[1]-'0')*10 + int(rs[2]-'0'), true
	}
	if len(rest) > 0 {
		var ok bool
		if month, ok = twoDigits(rest); !ok {
			return false, false
		}
		rest = rest[3:]
	}
	if len(rest) > 0 {
		var ok bool
		if day, ok = twoDigits(rest); !ok || len(rest) != 3 {
			return false, false
		}
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year, negative) {
		return false, false
	}
	old = negative || len(year) < 4 || (len(year) == 4 && year < "1970")
	return true, old
}

// daysIn is the length of a month of the proleptic Gregorian year given by
// its decimal digits (any number of them) and sign.
func daysIn(month int, year string, negative bool) int {
	switch month {
	case 4, 6, 9, 11:
		return 30
	case 2:
		r := 0 // year mod 400, as Haskell's `mod` (never negative)
		for _, d := range year {
			r = (r*10 + int(d-'0')) % 400
		}
		if negative {
			r = (400 - r) % 400
		}
		if r%4 == 0 && (r%100 != 0 || r == 0) {
			return 29
		}
		return 28
	}
	return 31
}

// isDigit is Data.Char.isDigit: ASCII digits only.
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// readsAsDouble reports whether Haskell's `readMaybe v :: Maybe Double`
// (Query.hs' `parseNumber`) is a number: a numeric lexeme of the Haskell
// report (42, 4.2, 4.2e-1, 1E9, 0x2A, 0o52) or NaN or Infinity, with an
// optional minus (spaces allowed after it), any balanced parentheses around,
// and spaces between any of these. An exponent too large only gives Infinity.
func readsAsDouble(v string) bool {
	rs := []rune(v)
	i := skipSpaces(rs, 0)
	open := 0
	for i < len(rs) && rs[i] == '(' {
		open++
		i = skipSpaces(rs, i+1)
	}
	if i < len(rs) && rs[i] == '-' { // the Symbol "-" read by GHC.Read's readNumber
		i = skipSpaces(rs, i+1)
	}
	end := numberEnd(rs, i)
	if end == i {
		return false
	}
	i = skipSpaces(rs, end)
	for ; open > 0; open-- {
		if i == len(rs) || rs[i] != ')' {
			return false
		}
		i = skipSpaces(rs, i+1)
	}
	return i == len(rs)
}

// numberEnd is where the number lexeme (Text.Read.Lex's lexNumber, or the
// identifiers NaN and Infinity) starting at i ends; i when there is none.
// Whatever follows must then be a space, ')' or the end, or the read fails.
func numberEnd(rs []rune, i int) int {
	for _, word := range []string{"NaN", "Infinity"} {
		if hasPrefix(rs, i, word) {
			return i + len(word)
		}
	}
	digitsFrom := func(j int, isDigit func(rune) bool) int {
		for j < len(rs) && isDigit(rs[j]) {
			j++
		}
		return j
	}
	isOctal := func(r rune) bool { return r >= '0' && r <= '7' }
	isHex := func(r rune) bool { return isDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F') }
	if i+2 < len(rs) && rs[i] == '0' {
		switch rs[i+1] {
		case 'x', 'X':
			if isHex(rs[i+2]) {
				return digitsFrom(i+2, isHex)
			}
		case 'o', 'O':
			if isOctal(rs[i+2]) {
				return digitsFrom(i+2, isOctal)
			}
		}
	}
	j := digitsFrom(i, isDigit)
	if j == i {
		return i
	}
	if j+1 < len(rs) && rs[j] == '.' && isDigit(rs[j+1]) {
		j = digitsFrom(j+1, isDigit)
	}
	if j < len(rs) && (rs[j] == 'e' || rs[j] == 'E') {
		k := j + 1
		if k < len(rs) && (rs[k] == '+' || rs[k] == '-') {
			k++
		}
		if k < len(rs) && isDigit(rs[k]) {
			j = digitsFrom(k, isDigit)
		}
	}
	return j
}
