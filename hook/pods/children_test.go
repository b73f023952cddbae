package pods

import (
	"encoding/json"
	"testing"
)

// A title reaches the page's script (src/Monocle/Main.hs:57,
// web/public/index.html:12) as text the browser reads back as it was: what
// would end or corrupt the JavaScript string, or end the <script> element,
// or not pass the image's locale intact, as JavaScript escapes.
func TestTitleAsTheScriptReadsIt(t *testing.T) {
	for title, want := range map[string]string{
		"Team metrics & co > 2025":    "Team metrics & co > 2025",
		`Team "A"`:                    `Team \u0022A\u0022`,
		`C:\metrics`:                  `C:\u005cmetrics`,
		"two\nlines":                  `two\u000alines`,
		"</script><script>alert(1)//": `\u003c/script>\u003cscript>alert(1)//`,
		"a\u2028b":                    `a\u2028b`,
		"Équipe":                      `\u00c9quipe`,
		"📈 metrics":                   `\ud83d\udcc8 metrics`,
	} {
		got := scriptString(title)
		if got != want {
			t.Errorf("%q: %q, want %q", title, got, want)
		}
		// What a browser's JavaScript reads back: JSON's string escapes
		// are JavaScript's.
		var back string
		if err := json.Unmarshal([]byte(`"`+got+`"`), &back); err != nil || back != title {
			t.Errorf("%q reads back as %q (%v)", title, back, err)
		}
	}
}
