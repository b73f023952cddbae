package janitorjob

import (
	"fmt"
	"math/big"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
	"github.com/change-metrics/monocle-hook/internal/monoclesearch"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// The Job's arguments do not reach the janitor as the Job lists them. In
// Monocle 1.11.2's image, `monocle` is a script (nix/default.nix:503-507):
//
//	#!/usr/bin/sh -e
//	env LD_PRELOAD=.../libfakeroot.so .../bin/monocle $*
//
// The unquoted $* splits each argument at the shell's IFS (space, tab,
// newline: an empty one vanishes) and expands each word holding a pattern
// character (* ? [) into the file names it matches. The binary is linked
// with -rtsopts (monocle.cabal:305), so GHC's runtime takes the arguments
// from +RTS to -RTS as its own, and --RTS ends them (rts/RtsFlags.c,
// setupRtsFlags: exact words). And the image sets no locale
// (nix/default.nix:531-533: HOME only), so GHC reads argv in the C
// locale's ASCII (base's GHC.IO.Encoding: argvEncoding is the file system
// encoding, the locale's, with RoundtripFailure): each byte of a non-ASCII
// character becomes a lone surrogate, which Data.Text's pack turns into
// U+FFFD, so the janitor would look for another name. mangled says which
// of these would befall v, if any.
func mangled(v string) (string, bool) {
	switch v {
	case "+RTS", "-RTS", "--RTS":
		return "it is a word of GHC's runtime (Monocle's binary is linked with -rtsopts, monocle.cabal:305): the runtime would take it, and with +RTS the arguments after it, as its own options", true
	}
	for i, r := range v {
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			return fmt.Sprintf("the image's `monocle` wrapper passes its arguments on as an unquoted $* (nix/default.nix:506): the shell would split it at the %s (byte %d)", charName(r), i), true
		case r == '*' || r == '?' || r == '[':
			return fmt.Sprintf("the image's `monocle` wrapper passes its arguments on as an unquoted $* (nix/default.nix:506): the shell would read it as a file name pattern (%q at byte %d) and put the names of the files it matches in its place", r, i), true
		case r == '\\':
			// bash 4.4 (UBI 8's /usr/bin/sh) expands only a word with
			// * ? or [, but bash 5.0 also a word with a backslash.
			return fmt.Sprintf("the image's `monocle` wrapper passes its arguments on as an unquoted $* (nix/default.nix:506): a backslash (byte %d) can make the shell read it as a file name pattern", i), true
		case r >= utf8.RuneSelf:
			return fmt.Sprintf("it is not ASCII (byte %d): the image sets no locale (nix/default.nix:532), so Monocle reads its arguments as ASCII and each byte of a non-ASCII character as U+FFFD: the janitor would look for another name", i), true
		}
	}
	return "", false
}

func charName(r rune) string {
	switch r {
	case ' ':
		return "space"
	case '\t':
		return "tab"
	}
	return "newline"
}

// checkNames refuses a workspace or crawler name that would not reach the
// janitor as it is (mangled), saying what to do instead.
func checkNames(o Options) error {
	for _, arg := range []struct{ flag, value, instead string }{
		{"--workspace", o.Workspace, insteadWorkspace[o.Command]},
		{"--crawler", o.Crawler, insteadCrawler[o.Command]},
	} {
		if arg.value == "" {
			continue
		}
		if why, bad := mangled(arg.value); bad {
			return fmt.Errorf("%s %s cannot reach the janitor as it is: %s. %s", arg.flag, printable.Quote(arg.value), why, arg.instead)
		}
	}
	return nil
}

// What to do instead when a name cannot reach the janitor: the names are
// the config's, so no other spelling of them can.
var (
	insteadWorkspace = map[string]string{
		"update-idents": "Instead, run update-idents without --workspace: it updates every workspace of the config.",
	}
	insteadCrawler = map[string]string{
		"set-crawler-commit-date": "No Job of this image can name this crawler to the janitor. To crawl again from a date, rename the crawler in the config to a name of ASCII letters, digits, '-' and '_' and set its update_since to the date: a crawler starts from update_since for what it never crawled under its name.",
	}
)

func init() {
	for _, command := range []string{"wipe-crawler-data", "set-crawler-commit-date"} {
		insteadWorkspace[command] = "No Job of this image can name this workspace to the janitor: it can only run on a workspace named in ASCII, without spaces, tabs, newlines, '*', '?', '[' or '\\'."
	}
	insteadCrawler["wipe-crawler-data"] = "No Job of this image can name this crawler to the janitor: it can only wipe a crawler named in ASCII, without spaces, tabs, newlines, '*', '?', '[' or '\\'."
}

// checkURL refuses an Elasticsearch URL that would not reach the janitor
// as it is (mangled), when the API's Deployment holds it; it never shows
// the URL, which may hold credentials.
func checkURL(url, deployment string) error {
	if why, bad := mangled(url); bad {
		return fmt.Errorf("the Elasticsearch URL of the Deployment %s (MONOCLE_ELASTIC_URL; not shown: it may hold credentials) cannot reach the janitor's --elastic as it is: %s. Instead, give the Monocle a URL without it: percent-encode it (%%20 for a space), and a host as its ASCII (punycode) form", printable.Escape(deployment), why)
	}
	return nil
}

// commitDate is s, a date the janitor reads, rewritten without a space or
// anything mangled would refuse, for the same instant; false when the
// janitor does not read s.
//
// The janitor reads --commit-date with Monocle.Prelude's parseDateValue
// (src/Monocle/Backend/Janitor.hs:307-310; Janitor.hs imports
// Monocle.Prelude, whose parseDateValue takes a String, not the search
// language's of src/Monocle/Search/Query.hs:182, which only CLI.hs's
// lentille commands use): parseTimeM False defaultTimeLocale with "%F",
// then "%F %T %Z", then "%FT%XZ" (src/Monocle/Prelude.hs:444-450), into a
// UTCTime. A date that it does not read is logged and the Job completes
// having done nothing (Janitor.hs:313-314).
//
// "%F" (YYYY-MM-DD, midnight UTC) is written back as YYYY-MM-DD, the year
// without the spaces or zeros %Y may read before it. The other two are
// written as "%FT%XZ" in UTC: a time in another zone is moved to UTC as the
// time library does (zonedTimeToUTC; localToUTCTimeOfDay adds the zone's
// minutes to the hours and minutes, the date moving by whole days, and
// keeps the seconds: 60, a leap second, stays 60), so the UTCTime read back
// is the same value.
func commitDate(s string) (string, bool) {
	format := ""
	for _, f := range []string{"%Y-%m-%d", "%Y-%m-%d %H:%M:%S %Z", "%Y-%m-%dT%H:%M:%SZ"} {
		if _, ok := monoclesearch.ParseTime(f, s); ok {
			format = f
			break
		}
	}
	if format == "" || !monocleconfig.ParsesDate(s) {
		return "", false
	}
	rs := []rune(s)
	i := 0
	negative := rs[i] == '-'
	if negative {
		i++
	}
	i = skipSpaces(rs, i)
	start := i
	for i < len(rs) && '0' <= rs[i] && rs[i] <= '9' {
		i++
	}
	year, _ := new(big.Int).SetString(string(rs[start:i]), 10)
	if negative {
		year.Neg(year)
	}
	month, day := two(rs, i+1), two(rs, i+4)
	i += 6
	if format == "%Y-%m-%d" {
		return fmt.Sprintf("%s-%02d-%02d", yearString(year), month, day), true
	}
	offset := 0             // the zone's minutes east of UTC
	i = skipSpaces(rs, i+1) // a space, or the T
	hour, minute, second := two(rs, i), two(rs, i+3), two(rs, i+6)
	if format == "%Y-%m-%d %H:%M:%S %Z" {
		offset = zoneMinutes(string(rs[skipSpaces(rs, i+8):]))
	}
	// localToUTCTimeOfDay (time, lib/Data/Time/LocalTime/Internal/TimeOfDay.hs:82-89).
	minutes := hour*60 + minute - offset
	days := floorDiv(minutes, 24*60)
	minutes -= days * 24 * 60
	// The calendar repeats every 400 years: move the date in a year of the
	// same place in the cycle, then the year by as much as it moved.
	cycle := int(new(big.Int).Mod(year, big.NewInt(400)).Int64())
	moved := time.Date(2000+cycle, time.Month(month), day, 0, 0, 0, 0, time.UTC).AddDate(0, 0, days)
	year.Add(year, big.NewInt(int64(moved.Year()-2000-cycle)))
	out := fmt.Sprintf("%s-%02d-%02dT%02d:%02d:%02dZ", yearString(year), int(moved.Month()), moved.Day(), minutes/60, minutes%60, second)
	if !monocleconfig.ParsesDate(out) {
		return "", false // never: what it writes, it reads
	}
	return out, true
}

// yearString writes a year as %Y reads it back: at least four digits,
// after a '-' when it is negative.
func yearString(y *big.Int) string {
	digits := new(big.Int).Abs(y).String()
	if len(digits) < 4 {
		digits = strings.Repeat("0", 4-len(digits)) + digits
	}
	if y.Sign() < 0 {
		return "-" + digits
	}
	return digits
}

// zoneMinutes is the offset of a zone %Z read (ParseTime checked it), as
// the time library's buildTime for a TimeZone gives it (time 1.12.2,
// lib/Data/Time/Format/Parse/Instances.hs:312-367): +HHMM or +HH:MM; a
// known zone of defaultTimeLocale, its name upper-cased; "UTC"; a military
// letter.
func zoneMinutes(zone string) int {
	if zone[0] == '+' || zone[0] == '-' {
		digits := strings.ReplaceAll(zone[1:], ":", "")
		m := (int(digits[0]-'0')*10+int(digits[1]-'0'))*60 + int(digits[2]-'0')*10 + int(digits[3]-'0')
		if zone[0] == '-' {
			return -m
		}
		return m
	}
	upper := strings.ToUpper(zone)
	if m, ok := knownZones[upper]; ok {
		return m
	}
	if zone == "UTC" {
		return 0
	}
	switch c, _ := utf8.DecodeRuneInString(upper); {
	case c <= 'I':
		return (1 + int(c-'A')) * 60
	case c <= 'M':
		return (10 + int(c-'K')) * 60
	case c <= 'Y':
		return (int('N'-c) - 1) * 60
	}
	return 0 // Z
}

// knownZones is defaultTimeLocale's knownTimeZones (time 1.12.2,
// lib/Data/Time/Format/Locale.hs:63-74).
var knownZones = map[string]int{"UT": 0, "GMT": 0, "EST": -5 * 60, "EDT": -4 * 60, "CST": -6 * 60, "CDT": -5 * 60, "MST": -7 * 60, "MDT": -6 * 60, "PST": -8 * 60, "PDT": -7 * 60}

// two is the two digits at rs[i].
func two(rs []rune, i int) int { return int(rs[i]-'0')*10 + int(rs[i+1]-'0') }

// skipSpaces is ReadP's skipSpaces: past Data.Char.isSpace characters.
func skipSpaces(rs []rune, i int) int {
	for i < len(rs) && ('\t' <= rs[i] && rs[i] <= '\r' || unicode.Is(unicode.Zs, rs[i])) {
		i++
	}
	return i
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
