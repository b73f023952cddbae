package monoclesearch

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// Query.hs' `loadAliases` compiles each alias as if the time were
// fakeNow, so which relative dates load is fixed: a date before
// 1970-01-01 ("Date is too old") is an error, e.g. now-52years.
var fakeNow = time.Date(2021, time.June, 2, 23, 0, 0, 0, time.UTC)

// oldestRelative is, per unit of Query.hs' `timeRangeReader`, the largest
// count whose date is not before 1970-01-01.
var oldestRelative = map[string]uint64{
	"hour":  uint64(fakeNow.Unix() / 3600),  // now-Nhours: fakeNow minus N*3600 s
	"day":   uint64(fakeNow.Unix() / 86400), // now-Ndays moves the date, keeps 23:00
	"week":  uint64(fakeNow.Unix() / 86400 / 7),
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
		return "Invalid date: " + printable.Escape(v)
	case old:
		return "Date is too old: " + printable.Escape(v)
	}
	return ""
}

// relativeDate is Query.hs' `relTimeReader` run by `readMaybe`: "now", or
// "now-" digits unit ["s"], where unit is hour, day, week, month or year;
// trailing spaces (readMaybe skips them) are allowed, leading ones are not.
// The count is read as a Haskell Word, so it wraps at 2^64 (readDecP).
func relativeDate(v string) (parsed, old bool) {
	m := relativeForm.FindStringSubmatch(v)
	if m == nil {
		return false, false
	}
	var count uint64
	for _, d := range m[1] {
		count = count*10 + uint64(d-'0')
	}
	return true, m[2] != "" && count > oldestRelative[m[2]]
}

var relativeForm = regexp.MustCompile(`^now(?:-([0-9]+)(hour|day|week|month|year)s?)?[\t-\r\p{Zs}]*$`)

// absoluteDate is Query.hs' `parseDateValue`: Data.Time's parseTimeM with
// "%F", then "%Y-%m", then "%Y".
func absoluteDate(v string) (parsed, old bool) {
	for _, format := range []string{"%Y-%m-%d", "%Y-%m", "%Y"} {
		if year, ok := ParseTime(format, v); ok {
			return true, strings.HasPrefix(year, "-") || len(year) < 4 || len(year) == 4 && year < "1970"
		}
	}
	return false, false
}

// ParseTime is Data.Time's parseTimeM False defaultTimeLocale format s for
// the specifiers Monocle's formats use: whether s reads, and the year's
// digits without leading zeros, after a "-" when it is negative. It follows
// the time library (1.12.2, GHC 9.6's) in lib/Data/Time/Format/Parse/Class.hs
// and Instances.hs: %Y is an optional '-', optional spaces, then one or more
// digits (any year); %m %d %H %M %S are exactly two digits, in range; %Z
// is a zone (zoneEnd); a space in the format matches one or more spaces;
// other characters match themselves in either case (charCI); the day must
// exist (fromGregorianValid).
func ParseTime(format, s string) (year string, ok bool) {
	rs := []rune(s)
	// The two-digit fields read, by specifier: a month and a day not read
	// are 1.
	i, read := 0, [128]int{'m': 1, 'd': 1}
	for f := 0; f < len(format); f++ {
		var spec byte // the specifier after a '%'
		if format[f] == '%' {
			f++
			spec = format[f]
		}
		switch {
		case spec == 0 && format[f] == ' ':
			if i == len(rs) || !isHaskellSpace(rs[i]) {
				return "", false
			}
			i = skipSpaces(rs, i)
		case spec == 0:
			if i == len(rs) || unicode.ToUpper(rs[i]) != unicode.ToUpper(rune(format[f])) {
				return "", false
			}
			i++
		case spec == 'Y':
			negative := i < len(rs) && rs[i] == '-'
			if negative {
				i++
			}
			i = skipSpaces(rs, i)
			digits := i
			for i < len(rs) && isDigit(rs[i]) {
				i++
			}
			if i == digits {
				return "", false
			}
			year = strings.TrimLeft(string(rs[digits:i]), "0")
			if negative {
				year = "-" + year
			}
		case spec == 'Z':
			if i, ok = zoneEnd(rs, i); !ok {
				return "", false
			}
		default:
			n, ok := twoDigits(rs, i)
			if bounds := timeFields[spec]; !ok || n < bounds[0] || n > bounds[1] {
				return "", false
			}
			read[spec] = n
			i += 2
		}
	}
	return year, i == len(rs) && read['d'] <= daysIn(read['m'], year)
}

// timeFields are the bounds of the two-digit specifiers.
var timeFields = map[byte][2]int{'m': {1, 12}, 'd': {1, 31}, 'H': {0, 23}, 'M': {0, 59}, 'S': {0, 60}}

// daysIn is the length of a month in a year as ParseTime gives it, of the
// proleptic Gregorian calendar. The calendar repeats every 400 years, so
// Go's time counts the days in the year mod 400 (Haskell's `mod`, never
// negative).
func daysIn(month int, year string) int {
	r := 0
	for _, d := range strings.TrimPrefix(year, "-") {
		r = (r*10 + int(d-'0')) % 400
	}
	if strings.HasPrefix(year, "-") {
		r = (400 - r) % 400
	}
	return time.Date(r, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// zoneEnd is where %Z, read as a TimeZone from rs[i], ends: letters
// (munch1 isAlpha) naming a zone of defaultTimeLocale, "UTC", or a
// one-letter military zone; else a numeric offset +HHMM or +HH:MM (any
// digits).
func zoneEnd(rs []rune, i int) (int, bool) {
	start := i
	for i < len(rs) && unicode.IsLetter(rs[i]) {
		i++
	}
	if i > start {
		return i, knownZone(string(rs[start:i]))
	}
	offset := zoneOffset.FindString(string(rs[i:]))
	return i + len(offset), offset != ""
}

var zoneOffset = regexp.MustCompile(`^[-+][0-9]{2}:?[0-9]{2}`)

// twoDigits reads the two digits at rs[i], if they are.
func twoDigits(rs []rune, i int) (int, bool) {
	if i+2 > len(rs) || !isDigit(rs[i]) || !isDigit(rs[i+1]) {
		return 0, false
	}
	return int(rs[i]-'0')*10 + int(rs[i+1]-'0'), true
}

func knownZone(name string) bool {
	upper := strings.ToUpper(name)
	if name == "UTC" || slices.Contains([]string{"UT", "GMT", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT"}, upper) {
		return true
	}
	// getMilZone: one letter, A-Z but J, once uppercased.
	r, size := utf8.DecodeRuneInString(upper)
	return size == len(upper) && utf8.RuneCountInString(name) == 1 && 'A' <= r && r <= 'Z' && r != 'J'
}

// isDigit is Data.Char.isDigit: ASCII digits only.
func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// readsAsDouble reports whether Haskell's `readMaybe v :: Maybe Double`
// (Query.hs' `parseNumber`) is a number: a numeric lexeme of the Haskell
// report (42, 4.2, 4.2e-1, 1E9, 0x2A, 0o52; Text.Read.Lex's lexNumber) or
// NaN or Infinity, with an optional minus (spaces allowed after it), any
// balanced parentheses around, and spaces (Data.Char.isSpace) between any
// of these. An exponent too large only gives Infinity.
func readsAsDouble(v string) bool {
	m := haskellDouble.FindStringSubmatch(v)
	return m != nil && strings.Count(m[1], "(") == strings.Count(m[2], ")")
}

// haskellDouble is the form readsAsDouble reads, the parentheses before
// the number and after it in its submatches.
var haskellDouble = func() *regexp.Regexp {
	spaces := `[\t-\r\p{Zs}]*`
	number := `(?:NaN|Infinity|0[xX][0-9a-fA-F]+|0[oO][0-7]+|[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)`
	return regexp.MustCompile(`^` + spaces + `((?:\(` + spaces + `)*)(?:-` + spaces + `)?` + number + spaces + `((?:\)` + spaces + `)*)$`)
}()
