package monocleconfig

import (
	"strings"
	"testing"
)

// TestAsStrictAsHsYAML: YAML that HsYAML reads and yaml.v3 reads otherwise
// (src/Data/YAML/Event.hs and src/Data/YAML/Schema/Internal.hs, HsYAML
// 0.2.1): a %YAML directive of any 1.x version, and the non-specific tag
// "!", with which a plain scalar is a string.
func TestAsStrictAsHsYAML(t *testing.T) {
	tests := map[string]struct {
		yaml     string
		problems []want
	}{
		"%YAML 1.2":                       {yaml: "%YAML 1.2\n---\n" + seedDefaultConfig},
		"%YAML 1.1":                       {yaml: "%YAML 1.1\n---\n" + seedDefaultConfig},
		"%YAML 1.10 with a comment":       {yaml: "# c\n\n%YAML 1.10 # the version\n---\n" + seedDefaultConfig},
		"%YAML 01.3 after a BOM, in CRLF": {yaml: "\ufeff%YAML 01.3\r\n---\r\n" + strings.ReplaceAll(seedDefaultConfig, "\n", "\r\n")},
		"%YAML 1. is refused":             {yaml: "%YAML 1.\n---\n" + seedDefaultConfig, problems: []want{{"", "does not parse"}}},
		"%YAML 2.0 is refused":            {yaml: "%YAML 2.0\n---\n" + seedDefaultConfig, problems: []want{{"", "does not parse"}}},
		"%YAML 1.2 twice is refused":      {yaml: "%YAML 1.2\n%YAML 1.2\n---\n" + seedDefaultConfig, problems: []want{{"", "does not parse"}}},
		"%YAML 1.2 needs ---":             {yaml: "%YAML 1.2\n" + seedDefaultConfig, problems: []want{{"", "does not parse"}}},
		"%YAML 1.2 in a block scalar is text": {
			yaml:     "workspaces:\n  - name: |\n      %YAML 1.2\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "not a valid index name"}},
		},
		"! on a number is a string":         {yaml: "workspaces:\n  - name: ! 12\n    crawlers: []\n"},
		"! on a bool, in flow":              {yaml: "workspaces: [{name: ! true, crawlers: []}]\n"},
		"! after an anchor":                 {yaml: "workspaces:\n  - name: &n ! 12\n    crawlers: []\n"},
		"! before an anchor":                {yaml: "workspaces:\n  - name: ! &n 12\n    crawlers: []\n"},
		"! after multibyte text and breaks": {yaml: "workspaces:\n  - {crawlers: [], idents: [{ident: \"é\u2028\r\n\u0085\", aliases: []}], \"é\": x, name: ! 12}\n"},
		"! after an anchor and a comment":   {yaml: "workspaces:\n  - name: &n # the name\n      ! 12\n    crawlers: []\n"},
		"! on the line before":              {yaml: "workspaces:\n  - name: !\n      12\n    crawlers: []\n"},
		"! on a key":                        {yaml: "workspaces:\n  - name: w\n    crawlers: []\n    ! 12: ignored\n"},
		"! with nothing is an empty string": {
			yaml:     "workspaces:\n  - name: !\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "not a valid index name"}},
		},
		"no tag: a number": {
			yaml:     "workspaces:\n  - name: 12\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must be a string, not a number"}},
		},
		"!! on a number is not the non-specific tag": {
			yaml:     "workspaces:\n  - name: !!int 12\n    crawlers: []\n",
			problems: []want{{"workspaces[0].name", "must be a string, not a number"}},
		},
		"a ! in a string is text": {
			yaml:     "workspaces:\n  - name: \"! 12\"\n    crawlers: [] # ! 12\n    idents: [{ident: a!, aliases: ['!']}]\n",
			problems: []want{{"workspaces[0].name", "not a valid index name"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), allTokens)
			assertProblems(t, err, tc.problems)
		})
	}
}
