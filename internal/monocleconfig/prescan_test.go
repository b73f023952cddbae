package monocleconfig

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// nodesBuilt counts the nodes yaml.v3 builds from data, on every document
// of the stream (documents included); false when the stream does not parse,
// yaml.v3 then dropping what it built.
func nodesBuilt(data []byte) (int, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	total := 0
	var count func(n *yaml.Node)
	count = func(n *yaml.Node) {
		total++
		for _, c := range n.Content {
			count(c)
		}
	}
	for {
		var doc yaml.Node
		switch err := dec.Decode(&doc); {
		case errors.Is(err, io.EOF):
			return total, true
		case err != nil:
			return total, false
		}
		count(&doc)
	}
}

// checkBound fails t when yaml.v3 builds more nodes from data, or from any
// of its first maxLines lines, than boundYAML says. A stream that does not parse is
// checked on the first lines that do: the nodes yaml.v3 built before its
// error are out of reach, and those lines come closest.
func checkBound(t *testing.T, data []byte, maxLines int) {
	t.Helper()
	check := func(data []byte) {
		if nodes, ok := nodesBuilt(data); ok {
			if bound := boundYAML(data).nodes; bound < nodes {
				t.Fatalf("%d nodes built from %q, bound %d", nodes, data, bound)
			}
		}
	}
	check(data)
	if len(data) > 8<<10 {
		return // its first lines are another test's
	}
	cut := 0
	for range maxLines {
		next := bytes.IndexByte(data[cut:], '\n')
		if next < 0 {
			return
		}
		cut += next + 1
		check(data[:cut])
	}
}

// boundCorpus is YAML that tries the bound: the test data, each shape of
// the cost tests, and the corners of yaml.v3's scanner and parser.
func boundCorpus(t testing.TB) [][]byte {
	t.Helper()
	var corpus [][]byte
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, data)
	}
	for _, s := range costShapes {
		corpus = append(corpus, s.build(40))
	}
	for _, gen := range realisticConfigs {
		corpus = append(corpus, gen.make(4<<10))
	}
	for _, s := range []string{
		seedDefaultConfig,
		"",
		"a",
		"a: &a [*a]\n",
		"- \n- #\n-\n- - - a\n- ? ? b\n",
		"? \n? a\n? a: b\n: c\n",
		"{a, b, c}\n",
		"{a: , b: , ? c, ? , : d}\n",
		"[a: , : b, ? , ? c: d, {e}]\n",
		"[a, {b}, [c: d], e: f]\n",
		"{[a, b]: c, {d: e}: f, *x : g}\n",
		"- &a\n- !t\n- &b !t\n- !t &c\n- *a\n",
		"a: &x\nb: !t\nc: &y !t\n",
		"x: {&a a: b, &b c}\n",
		"x: [&a: b, &b , !t , !t]\n",
		"&a:\n",
		"'a': b\n\"c\": d\n'e':f\n{\"g\":h, 'i':j}\n",
		"[\"a\":b, 'c':d]\n",
		"x: \"a, [b, c], {d, e}\"\n",
		"x: 'a: b, c: d'\ny: \"e\n  [f, g]\n  h\" \n",
		"x: |\n  a: [b, c]\n  - d\n\ny: >\n  {e, f}\n",
		"x: |2-\n   a, b\n",
		"x: a\n  b: [c]\n  d\n",
		"a b c: d e f\ng h: [i j, k l]\n",
		"a #b, c\n[d #e, f\n, g]\n",
		"a: b #c: d, e\n",
		"- a # [b, c]\n- 'd' # [e, f]\n",
		"x: !a,[b, c]\ny: !a[ b, c]\n",
		"[!a,b c, d]\n{!a,b c, d}\n",
		"x: !<tag:a,b> c\n",
		"%YAML 1.2\n%TAG !e! tag:e.com,2000:\n--- !e!x\na\n...\n--- b\n",
		"---\n---\n--- a\n...\n---\n",
		"--- |\n  a\n--- >\n b\n",
		"\ufeffa: b\n",
		"\ufeff--- [a, b]\n",
		"a:\r\n  - b\r\n  - c\r\n",
		"a: b\u0085c: d\u2028e: [f]\u2029- g\n",
		"# a\u2028[b, c, d]\n",
		"a:\tb\n\t- c\n",
		"[a,\n b,\n {c,\n d}]\n",
		"{a: [b,\n c], d\n}\n",
		"? - a\n  - b\n: - c\n",
		"- - - - a\n  - b\n",
		"? ? ? a\n",
		"a:\n- b\n- c:\n  - d\n",
		"*a\n",
		"[*a, &a b, *a]\n",
		"{[a: b], c}\n{{a: b}, c}\n{[? a], c}\n{[x, [a: b]], c}\n{\"a: b\", c}\n{'a': b c, d}\n",
		"x: {a b: c d, e f, g}\n[a b, c d: e f, ? g h]\n",
		"a b c\nd: e f g\n- h i j\n- k l: m n\n",
		"x: a #b\n  c d\n",
		"x: [a,,b]\n",
		"x: {a,,b}\n",
		"x: {,}\n",
		"x: [?]\n",
		"x: {?}\n",
		"x: [:]\n",
		"[- a]\n",
		"{a: b: c}\n",
		"a: b: c\n",
		"'unterminated\n[a, b]\n",
		"\"a\\\"b, [c, d]\"\n",
		"\x00[a, b]\n",
		"\xff\xfea\x00:\x00 \x00[\x00b\x00,\x00c\x00]\x00\n\x00",
		"\xfe\xff\x00a\x00:\x00 \x00{\x00b\x00}\x00\n",
	} {
		corpus = append(corpus, []byte(s))
	}
	return corpus
}

// The bound is sound: yaml.v3 never builds more nodes than it says.
func TestBoundIsSound(t *testing.T) {
	for _, data := range boundCorpus(t) {
		checkBound(t, data, 200)
	}
}

// yamlPieces are what the random streams of TestBoundIsSoundOnRandomYAML
// are made of: every indicator, with and without blanks, in every context.
var yamlPieces = []string{
	"a", "bc", "1", "a b", " ", " ", "  ", "\t", "\n", "\n", "\n  ", "\n- ", "\r\n",
	":", ": ", ":\n", "-", "- ", "-\n", "?", "? ", "---\n", "...\n", "--- ",
	"[", "]", "{", "}", ",", ", ", "[]", "{}",
	"\"", "'", "\"x\"", "'y'", "\"a, [b]\"", "'c: d'",
	"&a", "&a ", "*a", "*a ", "!t ", "!!str ", "!a,[", "!<x> ",
	"#", " #", " #c\n", "# [a, b]\n",
	"|\n", ">\n", "|-\n  ", "%YAML 1.2\n", "\ufeff", "\u2028", "\u0085",
}

// Random streams of YAML pieces, most of which yaml.v3 refuses, try what
// the hand-written corpus misses. DEEP_BOUND_RUNS raises their number.
func TestBoundIsSoundOnRandomYAML(t *testing.T) {
	runs := 20000
	if testing.Short() {
		runs = 2000
	}
	if s := os.Getenv("DEEP_BOUND_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		runs = n
	}
	rng := rand.New(rand.NewPCG(10, 10))
	var b strings.Builder
	for range runs {
		b.Reset()
		for range 1 + rng.IntN(30) {
			b.WriteString(yamlPieces[rng.IntN(len(yamlPieces))])
		}
		data := []byte(b.String())
		if nodes, ok := nodesBuilt(data); ok {
			if bound := boundYAML(data).nodes; bound < nodes {
				t.Fatalf("%d nodes built from %q, bound %d", nodes, data, bound)
			}
		}
	}
}

// FuzzBound asserts the bound on arbitrary bytes, as TestBoundIsSound
// does on its corpus.
func FuzzBound(f *testing.F) {
	for _, data := range boundCorpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 {
			return
		}
		checkBound(t, data, 32)
	})
}
