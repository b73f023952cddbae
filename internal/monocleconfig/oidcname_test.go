package monocleconfig

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"k8s.io/apimachinery/pkg/util/validation"
)

// upperASCII is Data.Text.toUpper wherever that gives ASCII: for every
// rune, it agrees with x/text's full upper-case mapping (the SpecialCasing
// one) when that is all ASCII, and refuses the rune otherwise. x/text's
// Unicode version (cases.UnicodeVersion) may differ from that of Monocle's
// text package: see fullUpperASCII.
func TestUpperASCII(t *testing.T) {
	upper := cases.Upper(language.Und)
	found := 0
	for r := rune(0); r <= 0x10FFFF; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue // surrogates: not characters of a UTF-8 text
		}
		want := upper.String(string(r))
		ascii := isASCII(want)
		got, ok := upperASCII(r)
		switch {
		case ascii && (!ok || got != want):
			t.Errorf("U+%04X %q: upperASCII %q, %v; want %q", r, r, got, ok, want)
		case !ascii && ok:
			t.Errorf("U+%04X %q: upperASCII %q; its upper case %q is not ASCII", r, r, got, want)
		}
		if ascii && r >= 0x80 {
			found++
		}
	}
	if found != len(fullUpperASCII) {
		t.Errorf("%d non-ASCII runes upper-case to ASCII, fullUpperASCII has %d", found, len(fullUpperASCII))
	}
	t.Logf("x/text's Unicode %s", cases.UnicodeVersion)
}

// The variable of the OIDC client secret is
// "MONOCLE_OIDC_" <> T.replace " " "_" (T.toUpper name) <> "_CLIENT_SECRET"
// (src/Monocle/Config.hs:324-325), with Data.Text.toUpper's full mapping;
// a name whose variable cannot be a Secret's key is refused.
func TestOIDCProviderNames(t *testing.T) {
	tests := map[string]struct {
		name     string // as a YAML double-quoted scalar's content
		variable string // "" when refused
		problem  string // in the refusal
	}{
		"ASCII":                                      {"corp sso", "MONOCLE_OIDC_CORP_SSO_CLIENT_SECRET", ""},
		"sharp s is SS":                              {"straße", "MONOCLE_OIDC_STRASSE_CLIENT_SECRET", ""},
		"the fi ligature is FI":                      {"\uFB01rm", "MONOCLE_OIDC_FIRM_CLIENT_SECRET", ""},
		"the ffl ligature is FFL":                    {"\uFB04", "MONOCLE_OIDC_FFL_CLIENT_SECRET", ""},
		"dotless i is I":                             {"\u0131d", "MONOCLE_OIDC_ID_CLIENT_SECRET", ""},
		"long s is S":                                {"\u017Fso", "MONOCLE_OIDC_SSO_CLIENT_SECRET", ""},
		"spaces only":                                {"   ", "MONOCLE_OIDC_____CLIENT_SECRET", ""},
		"dot, dash and digits kept":                  {"sso.corp-1", "MONOCLE_OIDC_SSO.CORP-1_CLIENT_SECRET", ""},
		"e acute is É, not ASCII":                    {"café", "", `"é", upper-cased as Monocle does, is not ASCII`},
		"the Kelvin sign is its own case":            {"\u212A", "", "\"\u212A\", upper-cased as Monocle does, is not ASCII"},
		"n preceded by apostrophe is ʼN":             {"\u0149", "", `"ŉ", upper-cased as Monocle does, is not ASCII`},
		"a tab is not a space":                       {"corp\tsso", "", `"\t" is not one of those`},
		"a no-break space":                           {"corp\u00A0sso", "", `"\u00a0", upper-cased as Monocle does, is not ASCII`},
		"a slash":                                    {"corp/sso", "", `"/" is not one of those`},
		"226 bytes in the name, 253 in the variable": {strings.Repeat("a", 226), "MONOCLE_OIDC_" + strings.Repeat("A", 226) + "_CLIENT_SECRET", ""},
		"227 bytes in the name":                      {strings.Repeat("a", 227), "", "more than the 253 bytes"},
		"113 sharp s, 226 bytes once upper-cased":    {strings.Repeat("ß", 113), "MONOCLE_OIDC_" + strings.Repeat("SS", 113) + "_CLIENT_SECRET", ""},
		"114 sharp s, 228 bytes once upper-cased":    {strings.Repeat("ß", 114), "", "more than the 253 bytes"},
		"76 ffi ligatures, 228 bytes":                {strings.Repeat("\uFB03", 76), "", "more than the 253 bytes"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`).Replace(tc.name)
			config := "auth:\n  auth_provider:\n    oidc_provider_name: \"" + quoted + "\"\n    oidc_issuer_url: https://sso.example.com\n    oidc_client_id: monocle\nworkspaces: []\n"
			cfg, err := Parse([]byte(config), func(string) bool { return true })
			if tc.variable == "" {
				var e *Error
				if !errors.As(err, &e) || len(e.Problems) != 1 || e.Problems[0].Path != "auth.auth_provider.oidc_provider_name" || !strings.Contains(e.Problems[0].Message, tc.problem) {
					t.Fatalf("err %v, want a refusal of oidc_provider_name with %q", err, tc.problem)
				}
				if v, _ := oidcSecretVariable(tc.name); v != "" {
					t.Errorf("variable %q for a refused name", v)
				}
				// What the hook holds a Secret's keys to refuses what
				// the full mapping gives, where it is ASCII.
				if up := cases.Upper(language.Und).String(tc.name); isASCII(up) {
					if key := "MONOCLE_OIDC_" + strings.ReplaceAll(up, " ", "_") + "_CLIENT_SECRET"; len(validation.IsConfigMapKey(key)) == 0 {
						t.Errorf("refused, but %q is a Secret's key", key)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.OIDCSecret != tc.variable {
				t.Errorf("OIDCSecret %q, want %q", cfg.OIDCSecret, tc.variable)
			}
			if errs := validation.IsConfigMapKey(cfg.OIDCSecret); len(errs) > 0 {
				t.Errorf("%q is not a Secret's key: %v", cfg.OIDCSecret, errs)
			}
		})
	}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
