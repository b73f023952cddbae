package monocleconfig

import "github.com/change-metrics/monocle-hook/internal/monoclesearch"

// ParsesDate is whether parseDateValue (src/Monocle/Prelude.hs) reads s: the
// config's update_since, the janitor's --commit-date. The first of
// parseTimeM False defaultTimeLocale "%F", "%F %T %Z" and "%FT%XZ" that
// succeeds; %F is "%Y-%m-%d", and %T and %X (defaultTimeLocale's timeFmt)
// are "%H:%M:%S".
func ParsesDate(s string) bool {
	for _, format := range []string{"%Y-%m-%d", "%Y-%m-%d %H:%M:%S %Z", "%Y-%m-%dT%H:%M:%SZ"} {
		if _, ok := monoclesearch.ParseTime(format, s); ok {
			return true
		}
	}
	return false
}
