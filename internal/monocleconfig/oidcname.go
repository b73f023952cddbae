package monocleconfig

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// maxSecretKey is the longest key a Secret may have
// (validation.IsConfigMapKey), which the hook holds the keys it prints to.
const maxSecretKey = 253

// oidcSecretVariable is the variable getAuthProvider reads the OIDC client
// secret from (src/Monocle/Config.hs:324-325):
//
//	providerNameToEnvFragment = T.replace " " "_" . T.toUpper
//	secretEnv pname = "MONOCLE_OIDC_" <> from (providerNameToEnvFragment pname) <> "_CLIENT_SECRET"
//
// problem is "" when the variable can be a Secret's key (letters, digits,
// '-', '_' and '.' of ASCII, at most 253 bytes), the only way the pods get
// it (envFrom); else it says why not, and no Secret can ever give it.
func oidcSecretVariable(name string) (variable, problem string) {
	var b strings.Builder
	b.WriteString("MONOCLE_OIDC_")
	for _, r := range name {
		upper, ok := upperASCII(r)
		if !ok {
			return "", fmt.Sprintf("%s, upper-cased as Monocle does, is not ASCII", printable.Quote(string(r)))
		}
		// T.replace after T.toUpper: only U+0020 becomes '_'.
		upper = strings.ReplaceAll(upper, " ", "_")
		for i := range len(upper) {
			if !secretKeyRune(rune(upper[i])) {
				return "", fmt.Sprintf("%s is not one of those", printable.Quote(string(r)))
			}
		}
		b.WriteString(upper)
	}
	b.WriteString("_CLIENT_SECRET")
	if b.Len() > maxSecretKey {
		return "", fmt.Sprintf("it would be more than the %d bytes a Secret's key may have", maxSecretKey)
	}
	return b.String(), ""
}

// upperASCII is Data.Text.toUpper of r when that is ASCII; ok is false
// otherwise. toUpper is the full Unicode mapping, one character at a time
// (text's caseConvert with upperMapping: SpecialCasing's unconditional
// mappings, else UnicodeData's simple one), where Go's unicode.ToUpper is
// the simple mapping alone: ß is SS in Haskell, ß in Go. Outside ASCII,
// only the runes of fullUpperASCII upper-case to ASCII.
func upperASCII(r rune) (string, bool) {
	switch {
	case 'a' <= r && r <= 'z':
		return string(r - 'a' + 'A'), true
	case r < utf8.RuneSelf:
		return string(r), true
	}
	s, ok := fullUpperASCII[r]
	return s, ok
}

// fullUpperASCII are the non-ASCII runes whose full upper-case mapping is
// all ASCII, derived from golang.org/x/text/cases (x/text v0.42.0, Unicode
// 15.0.0) and checked against it for every rune by TestUpperASCII. The
// text package Monocle 1.11.2 is built with (the one of GHC 9.6.2, which
// its nix set uses) may have tables of another Unicode version, which
// could differ on a rune added since: not checked. text's CaseMapping.hs
// of Unicode 16.0.0 maps these ten the same.
var fullUpperASCII = map[rune]string{
	'\u00DF': "SS",  // ß LATIN SMALL LETTER SHARP S (SpecialCasing)
	'\u0131': "I",   // ı LATIN SMALL LETTER DOTLESS I
	'\u017F': "S",   // ſ LATIN SMALL LETTER LONG S
	'\uFB00': "FF",  // ﬀ LATIN SMALL LIGATURE FF (SpecialCasing, as the rest)
	'\uFB01': "FI",  // ﬁ
	'\uFB02': "FL",  // ﬂ
	'\uFB03': "FFI", // ﬃ
	'\uFB04': "FFL", // ﬄ
	'\uFB05': "ST",  // ﬅ LATIN SMALL LIGATURE LONG S T
	'\uFB06': "ST",  // ﬆ LATIN SMALL LIGATURE ST
}
