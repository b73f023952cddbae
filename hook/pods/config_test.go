package pods

import (
	"encoding/json"
	"strings"
	"testing"
)

// A config Metacontroller could not store in a last-applied annotation is
// refused before it is parsed: the bound counts the config JSON-escaped.
func TestConfigFits(t *testing.T) {
	base := "workspaces:\n  - name: demo\n    crawlers: []\n"
	// pad makes a config of n bytes once JSON-escaped (each newline is two).
	pad := func(n int, c string) string {
		newlines := strings.Count(base, "\n") + 1
		return base + "#" + strings.Repeat(c, n-len(base)-2-newlines) + "\n"
	}
	tests := map[string]struct {
		config string
		ok     bool
	}{
		"at the bound":                 {pad(MaxConfigJSON, "x"), true},
		"a byte over":                  {pad(MaxConfigJSON+1, "x"), false},
		"under the bound, not escaped": {pad(MaxConfigJSON-1000, "<"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if err := configFits(tc.config); (err == nil) != tc.ok {
				t.Fatalf("configFits(%d bytes) = %v, want ok %v", len(tc.config), err, tc.ok)
			}
		})
	}
}

// jsonEscapedLen counts what encoding/json writes, for every byte value and
// the characters it escapes specially.
func TestJSONEscapedLen(t *testing.T) {
	inputs := []string{"", "plain", "a\"b\\c", "<script>&", "\u2028\u2029", "é中😀", "\xff\xfe", "\ufffd\xed\xa0\x80", "\x00\x01\x1f\b\f\n\r\t"}
	for b := range 256 {
		inputs = append(inputs, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"é")
	}
	for _, s := range inputs {
		encoded, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonEscapedLen(s), len(encoded)-2; got != want {
			t.Errorf("jsonEscapedLen(%q) = %d, encoding/json writes %d", s, got, want)
		}
	}
}
