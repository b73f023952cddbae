package hook

import (
	"strconv"
	"testing"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// The attacks on what the hook prints: a config's values reach
// SpecApplied's message, which people read in terminals (kubectl describe,
// -o jsonpath, monocle-hook check). Each must arrive as text: no control or
// bidi character, no line the message did not mean.
func TestMessagesCarryNoControls(t *testing.T) {
	// An OSC 52 clipboard write, a forged line, a C1 CSI, a bidi override.
	const hostileC1 = "\u009b2J\u202eexe\x7f\u0085"
	const hostile = "\x1b]52;c;cm0gLXJmIH4K\x07\r\nns/m: Applied\u009b2J\u202eexe"
	for name, config := range map[string]string{
		"a workspace name": "workspaces:\n  - name: " + yamlQuoted(hostile) + "\n    crawlers: []\n",
		// %1B in a tag decodes to ESC.
		"a YAML tag": "workspaces:\n  - name: !%1B]52;c;eA%07%0D%0A demo\n    crawlers: []\n",
		// The search language takes no C0 control, but C1, DEL and bidi
		// controls in its values and fields.
		"a search alias's value": aliasConfig("project:" + hostileC1),
		"a search alias's field": aliasConfig(hostileC1 + ":x"),
		"a search alias's date":  aliasConfig("from:" + hostileC1),
	} {
		t.Run(name, func(t *testing.T) {
			a := decodeAnswer(t, syncJSON(t, steady(t, configSpec(t, config, ""))))
			c := a.Status.Condition(ConditionSpecApplied)
			if c.Reason != "ConfigInvalid" {
				t.Fatalf("SpecApplied %+v, want ConfigInvalid", c)
			}
			if !printable.Clean(c.Message) {
				t.Errorf("SpecApplied's message carries a control or bidi character: %q", c.Message)
			}
			for _, c := range a.Status.Conditions {
				if !printable.Clean(c.Message) {
					t.Errorf("%s's message carries a control or bidi character: %q", c.Type, c.Message)
				}
			}
		})
	}
}

// yamlQuoted is s as a YAML double-quoted scalar: YAML refuses control
// characters in its text, not in its escapes, which are Go's for ASCII.
func yamlQuoted(s string) string { return strconv.QuoteToASCII(s) }

func aliasConfig(alias string) string {
	return "workspaces:\n  - name: demo\n    crawlers: []\n    search_aliases:\n      - {name: a, alias: " + yamlQuoted(alias) + "}\n"
}
