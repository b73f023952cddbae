package monocleconfig

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// HsYAML's core schema, on the scalar after "v: " in a one-key document.
func TestResolveScalar(t *testing.T) {
	tests := map[string]struct {
		yaml    string
		kind    jsonKind
		natural bool
		err     string
	}{
		"empty is null":                {yaml: "", kind: jsonNull},
		"tilde is null":                {yaml: "~", kind: jsonNull},
		"Null is null":                 {yaml: "Null", kind: jsonNull},
		"nULL is a string":             {yaml: "nULL", kind: jsonString},
		"True is a boolean":            {yaml: "True", kind: jsonBool},
		"yes is a string":              {yaml: "yes", kind: jsonString},
		"off is a string":              {yaml: "off", kind: jsonString},
		"y is a string":                {yaml: "y", kind: jsonString},
		"decimal":                      {yaml: "42", kind: jsonNumber, natural: true},
		"leading zeros are decimal":    {yaml: "0042", kind: jsonNumber, natural: true},
		"plus sign":                    {yaml: "+42", kind: jsonNumber, natural: true},
		"negative":                     {yaml: "-42", kind: jsonNumber},
		"negative zero":                {yaml: "-0", kind: jsonNumber, natural: true},
		"hexadecimal":                  {yaml: "0x2A", kind: jsonNumber, natural: true},
		"octal":                        {yaml: "0o52", kind: jsonNumber, natural: true},
		"0o alone is a string":         {yaml: "0o", kind: jsonString},
		"0X is not hexadecimal":        {yaml: "0X2A", kind: jsonString},
		"binary is a string":           {yaml: "0b101", kind: jsonString},
		"signed hexadecimal is string": {yaml: "-0x2A", kind: jsonString},
		"underscores make a string":    {yaml: "1_000", kind: jsonString},
		"float":                        {yaml: "1.5", kind: jsonNumber},
		"float with no fraction":       {yaml: "2.0", kind: jsonNumber, natural: true},
		"float ending in a dot":        {yaml: "2.", kind: jsonNumber, natural: true},
		"float starting with a dot":    {yaml: ".5", kind: jsonNumber},
		"exponent":                     {yaml: "1e3", kind: jsonNumber, natural: true},
		"dot then exponent":            {yaml: "1.e3", kind: jsonNumber, natural: true},
		"negative exponent":            {yaml: "15e-1", kind: jsonNumber},
		"huge is an infinity":          {yaml: "1e400", kind: jsonNumber, natural: true},
		"negative float zero":          {yaml: "-0.0", kind: jsonNumber, natural: true},
		"infinity is a 2^1024":         {yaml: ".inf", kind: jsonNumber, natural: true},
		"minus infinity":               {yaml: "-.Inf", kind: jsonNumber},
		"not a number":                 {yaml: ".NaN", kind: jsonNumber},
		"+.nan is a string":            {yaml: "+.nan", kind: jsonString},
		"a lone dot is a string":       {yaml: ".", kind: jsonString},
		"exponent without digits":      {yaml: "1e", kind: jsonString},
		"a date is a string":           {yaml: "2024-01-01", kind: jsonString},
		"a time is a string":           {yaml: "12:30:00", kind: jsonString},
		"full-width digits, a string":  {yaml: "４２", kind: jsonString},
		"quoted number is a string":    {yaml: `"42"`, kind: jsonString},
		"block scalar is a string":     {yaml: "|\n  42", kind: jsonString},
		"!!str":                        {yaml: "!!str 42", kind: jsonString},
		"!!int on digits":              {yaml: `!!int "42"`, kind: jsonNumber, natural: true},
		"!!int on a word":              {yaml: "!!int many", err: "not a valid !!int"},
		"!!float on an integer":        {yaml: "!!float 3", kind: jsonNumber, natural: true},
		"!!bool on yes":                {yaml: "!!bool yes", err: "not a valid !!bool"},
		"!!null on empty":              {yaml: `!!null ""`, kind: jsonNull},
		"!!timestamp":                  {yaml: "!!timestamp 2024-01-01", err: "the tag !!timestamp"},
		"a local tag":                  {yaml: "!local x", err: "the tag !local"},
		"a verbatim str tag":           {yaml: "!<tag:yaml.org,2002:str> 42", kind: jsonString},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte("v: "+tc.yaml+"\n"), &doc); err != nil {
				t.Fatal(err)
			}
			s, err := resolveScalar(doc.Content[0].Content[1])
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.kind != tc.kind || s.natural != tc.natural {
				t.Errorf("%v natural=%v, want %v natural=%v", s.kind, s.natural, tc.kind, tc.natural)
			}
		})
	}
}

// parseDateValue of src/Monocle/Prelude.hs, by the time library's rules.
func TestMonocleParsesDate(t *testing.T) {
	tests := map[string]bool{
		"2024-01-01":                   true,
		"2024-12-31":                   true,
		"2024-02-29":                   true,
		"2000-02-29":                   true,
		"1900-02-29":                   false,
		"2023-02-29":                   false,
		"2024-04-31":                   false,
		"2024-13-01":                   false,
		"2024-00-10":                   false,
		"2024-01-00":                   false,
		"2024-1-01":                    false,
		"2024-01-1":                    false,
		"24-01-01":                     true, // %Y takes any number of digits: year 24
		"12024-01-01":                  true,
		"-0044-03-15":                  true,
		"- 44-03-15":                   true, // %Y: '-', spaces, digits
		"  2024-01-01":                 true, // %Y skips leading spaces
		"2024-01-01 ":                  false,
		"2024/01/01":                   false,
		"01-01-2024":                   false, // 01 is the year, then 01-20 fails
		"":                             false,
		"2024-01-01 10:20:30 UTC":      true,
		"2024-01-01 10:20:30 utc":      false, // "UTC" is matched exactly
		"2024-01-01 10:20:30 gmt":      true,  // known zones in any case
		"2024-01-01 10:20:30 PDT":      true,
		"2024-01-01 10:20:30 CET":      false,
		"2024-01-01 10:20:30 z":        true, // a military zone
		"2024-01-01 10:20:30 J":        false,
		"2024-01-01 10:20:30 +0100":    true,
		"2024-01-01 10:20:30 -01:30":   true,
		"2024-01-01 10:20:30 +1":       false,
		"2024-01-01\t10:20:30  UTC":    true, // a format space is one or more
		"2024-01-01 10:20:60 UTC":      true, // a leap second
		"2024-01-01 10:20:61 UTC":      false,
		"2024-01-01 24:00:00 UTC":      false,
		"2024-01-01 10:20 UTC":         false,
		"2024-01-01 10:20:30":          false,
		"2024-01-01T10:20:30Z":         true,
		"2024-01-01t10:20:30z":         true, // format letters match either case
		"2024-01-01T10:20:30":          false,
		"2024-01-01T10:20:30+00:00":    false,
		"2024-01-01T10:20:30.5Z":       false,
		"2024-01-01 10:20:30\u0085UTC": false, // not a Haskell space
	}
	for in, want := range tests {
		if got := ParsesDate(in); got != want {
			t.Errorf("ParsesDate(%q) = %v, want %v", in, got, want)
		}
	}
}

// mkIndexName's doctests (src/Monocle/Config.hs) and more.
func TestIndexNameProblem(t *testing.T) {
	tests := map[string]string{
		"":                       "must not be empty",
		strings.Repeat("x", 256): "must be shorter than 256 bytes",
		strings.Repeat("é", 128): "must be shorter than 256 bytes",
		strings.Repeat("x", 255): "",
		"azerTY":                 "its letters must all be lowercase",
		"ǅ":                      "its letters must all be lowercase", // titlecase
		"ʰ":                      "its letters must all be lowercase", // modifier letter
		"hello#world":            "must not contain",
		"a:b":                    "must not contain",
		"a,b":                    "must not contain",
		"a\\b":                   "must not contain",
		"-test":                  "must not start with",
		"+test":                  "must not start with",
		".test":                  "must not start with",
		".":                      `must not be "." or ".."`,
		"..":                     `must not be "." or ".."`,
		"hello-world_42":         "",
		"a.b":                    "",
		"ß":                      "",
		"1":                      "",
		"😀":                      "",
		"a\tb":                   "",
	}
	for in, want := range tests {
		got := indexNameProblem(in)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("indexNameProblem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnvName(t *testing.T) {
	tests := map[string]string{
		"GITHUB_TOKEN": "GITHUB_TOKEN",
		"TOKEN":        "TOKEN",
		"_X":           "_X",
		"ghp_16C7e42F292c6912E7710c838347Ae178B4a": "(value not shown)",
		"ABCDEF0123456789ABCDEF":                   "(value not shown)",
		"github_token":                             "(value not shown)",
		"1TOKEN":                                   "(value not shown)",
		"":                                         "(value not shown)",
	}
	for in, want := range tests {
		if got := envName(in); got != want {
			t.Errorf("envName(%q) = %q, want %q", in, got, want)
		}
	}
}
