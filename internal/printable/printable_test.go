package printable

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"plain":                 {"workspace-1", "workspace-1"},
		"other scripts kept":    {"équipe 開発 ü", "équipe 開発 ü"},
		"replacement char kept": {"a\uFFFDb", "a\uFFFDb"},
		"ESC, an OSC 52 write":  {"\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\a`},
		"CR and newline":        {"ok\r\nns/m: Applied", `ok\r\nns/m: Applied`},
		"tab":                   {"a\tb", `a\tb`},
		"DEL":                   {"a\x7fb", `a\x7fb`},
		"C1 CSI and NEL":        {"a\u009b2Jb\u0085", `a\u009b2Jb\u0085`},
		"bidi override":         {"abc\u202eexe.txt", `abc\u202eexe.txt`},
		"bidi isolate":          {"\u2066x\u2069", `\u2066x\u2069`},
		"line separator":        {"a\u2028b", `a\u2028b`},
		"not UTF-8":             {"a\x9bb\xff", `a\x9bb\xff`},
	} {
		t.Run(name, func(t *testing.T) {
			got := Escape(tc.in)
			if got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !Clean(got) {
				t.Errorf("Escape(%q) = %q is not Clean", tc.in, got)
			}
			if Clean(tc.in) != (tc.in == tc.want) {
				t.Errorf("Clean(%q) = %v", tc.in, Clean(tc.in))
			}
			if q := Quote(tc.in); !Clean(q) || !strings.HasPrefix(q, `"`) {
				t.Errorf("Quote(%q) = %q", tc.in, q)
			}
		})
	}
}

// Every rune the issue names, and every byte, alone: escaped, or kept only
// when it is neither a control nor a bidi control.
func TestEscapeEveryControl(t *testing.T) {
	var controls []rune
	for r := rune(0); r < 0x20; r++ {
		controls = append(controls, r)
	}
	for r := rune(0x7f); r <= 0x9f; r++ {
		controls = append(controls, r)
	}
	for r := rune(0x202a); r <= 0x202e; r++ {
		controls = append(controls, r)
	}
	for r := rune(0x2066); r <= 0x2069; r++ {
		controls = append(controls, r)
	}
	for _, r := range controls {
		s := "x" + string(r) + "y"
		if Clean(s) || strings.ContainsRune(Escape(s), r) || strings.ContainsRune(Quote(s), r) {
			t.Errorf("%U: Clean %v, Escape %q, Quote %q", r, Clean(s), Escape(s), Quote(s))
		}
	}
	for b := 0; b < 256; b++ {
		if s := Escape(string([]byte{'x', byte(b), 'y'})); !Clean(s) {
			t.Errorf("byte %#x: Escape gives %q", b, s)
		}
	}
}

func TestLines(t *testing.T) {
	in := "# kubectl -n ns get job j\n# config (\x1b[2Jx\ry)\n\nlast"
	want := "# kubectl -n ns get job j\n# config (\\x1b[2Jx\\ry)\n\nlast"
	if got := Lines(in); got != want {
		t.Errorf("Lines(%q) = %q, want %q", in, got, want)
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("\x1b[2J\u202e\r\n\x9b")
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if !Clean(e) || !Clean(Quote(s)) {
			t.Fatalf("Escape(%q) = %q, Quote %q", s, e, Quote(s))
		}
		if Clean(s) != (e == s) {
			t.Fatalf("Clean(%q) = %v but Escape gives %q", s, Clean(s), e)
		}
		if Escape(e) != e {
			t.Fatalf("Escape is not idempotent on %q", s)
		}
	})
}

// JSON through Quoted reads back as the same value and holds nothing a
// terminal acts on, for every character Escape escapes (encoding/json
// leaves DEL, C1 and bidi as they are).
func TestQuotedJSON(t *testing.T) {
	var all []rune
	for r := rune(0); r < 0x3000; r++ {
		if unsafeRune(r) {
			all = append(all, r)
		}
	}
	in := map[string]string{"v": "a" + string(all) + "é\u00a0z"}
	raw, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if Clean(strings.ReplaceAll(string(raw), "\n", "")) {
		t.Fatal("encoding/json escaped them all itself: Quoted has nothing to do")
	}
	out := Quoted(raw)
	if !Clean(strings.ReplaceAll(string(out), "\n", "")) {
		t.Errorf("Quoted left a character a terminal acts on: %q", out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["v"] != in["v"] {
		t.Errorf("read back %q, %v; want %q", back["v"], err, in["v"])
	}
	if clean := []byte(`{"v": "é"}`); &Quoted(clean)[0] != &clean[0] {
		t.Error("Quoted copied a clean text")
	}
}
