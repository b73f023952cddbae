package monocleconfig

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// aliasBomb is the attack of BENCHMARKS.md ("Under attack"): one 10,000-byte scalar and a list of 2,500
// aliases to it, 17.5 KB that expand to 25 MB.
func aliasBomb() []byte {
	return []byte(seedDefaultConfig + "s: &s " + strings.Repeat("A", 10000) + "\nx: [" + strings.Repeat("*s, ", 2499) + "*s]\n")
}

// laughs nests aliases of aliases: 10^levels nodes from a few hundred bytes.
func laughs(levels int) []byte {
	var b strings.Builder
	b.WriteString(seedDefaultConfig + "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return []byte(b.String())
}

// nested is a config with a list nested depth deep under an ignored key.
func nested(depth int) []byte {
	return []byte(seedDefaultConfig + "deep: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n")
}

// flatConfig is a realistic config of about size bytes: one workspace with
// as many GitHub crawlers as fit, each with a few repositories.
func flatConfig(size int) []byte {
	var b strings.Builder
	b.WriteString("workspaces:\n  - name: big\n    crawlers:\n")
	for i := 0; b.Len() < size-200; i++ {
		fmt.Fprintf(&b, "      - name: crawler-%d\n        update_since: \"2024-01-01\"\n        provider:\n          github_organization: org-%d\n          github_repositories: [api-%d, web-%d, docs-%d]\n", i, i, i, i, i)
	}
	return []byte(b.String())
}

// tinyNodes is the densest YAML: a flow map of one-letter keys without
// values, a node a byte.
func tinyNodes(size int) []byte {
	return []byte(seedDefaultConfig + "x: {" + strings.Repeat("a,", (size-len(seedDefaultConfig))/2-4) + "a}\n")
}

func TestLimits(t *testing.T) {
	tests := map[string]struct {
		data    []byte
		limits  Limits
		problem string // "" when accepted
	}{
		"over MaxBytes": {
			data:    append([]byte(seedDefaultConfig), make([]byte, MaxBytes)...),
			limits:  DefaultLimits,
			problem: fmt.Sprintf("more than the %d this operator reads", MaxBytes),
		},
		"alias bomb": {
			data:    aliasBomb(),
			limits:  DefaultLimits,
			problem: fmt.Sprintf("the YAML expands to more than %d bytes of text", DefaultLimits.MaxExpandedBytes),
		},
		"nine levels of aliases of aliases": {
			data:    laughs(9),
			limits:  DefaultLimits,
			problem: "the YAML expands to more than 65536 nodes",
		},
		"a few aliases, as configs use them": {
			data:   laughs(2),
			limits: DefaultLimits,
		},
		"nesting deeper than MaxDepth": {
			data:    nested(DefaultLimits.MaxDepth),
			limits:  DefaultLimits,
			problem: "nests deeper than 1000 levels",
		},
		"nesting just within MaxDepth": {
			data:   nested(DefaultLimits.MaxDepth - 2),
			limits: DefaultLimits,
		},
		"nesting beyond yaml.v3's own limit": {
			data:    nested(10001),
			limits:  DefaultLimits,
			problem: "exceeded max depth of 10000",
		},
		"more nodes than MaxNodes, refused before parsing": {
			data:    tinyNodes(4096),
			limits:  Limits{MaxBytes: MaxBytes, MaxNodes: 1000, MaxExpandedBytes: MaxBytes, MaxDepth: 10},
			problem: "more than 1000 YAML nodes, as counted before parsing",
		},
		"MaxBytes of empty entries with comments": {
			data:    []byte("x:\n" + strings.Repeat("- #\n", MaxBytes/4-1)),
			limits:  DefaultLimits,
			problem: "more than 65536 YAML nodes, as counted before parsing",
		},
		"lines of comments count": {
			data:    []byte(seedDefaultConfig + strings.Repeat("#\n #\n", 200)),
			limits:  Limits{MaxBytes: MaxBytes, MaxNodes: 1000, MaxExpandedBytes: MaxBytes, MaxDepth: 10},
			problem: "more than 1000 YAML nodes, as counted before parsing",
		},
		"more expanded nodes than MaxNodes": {
			data:    laughs(3),
			limits:  Limits{MaxBytes: MaxBytes, MaxNodes: 1000, MaxExpandedBytes: MaxBytes, MaxDepth: 10},
			problem: "the YAML expands to more than 1000 nodes",
		},
		"directives": {
			data:    []byte(strings.Repeat("%YAML 1.2\n", maxDirectiveLines+1) + "---\n" + seedDefaultConfig),
			limits:  DefaultLimits,
			problem: "more than 64 lines that start with %",
		},
	}
	for _, gen := range realisticConfigs {
		tests["realistic, MaxBytes of "+gen.name] = struct {
			data    []byte
			limits  Limits
			problem string
		}{data: gen.make(MaxBytes), limits: DefaultLimits}
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseWithLimits(tc.data, allTokens, tc.limits)
			if tc.problem == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) != 1 || !strings.Contains(e.Problems[0].Message, tc.problem) {
				t.Fatalf("error %v, want one problem containing %q", err, tc.problem)
			}
		})
	}
}

// Realistic configs of MaxBytes stay within MaxNodes: the margin is logged
// (go test -v -run TestRealisticMargins), with the nodes yaml.v3 really
// builds.
func TestRealisticMargins(t *testing.T) {
	for _, gen := range realisticConfigs {
		data := gen.make(MaxBytes)
		b := boundYAML(data)
		nodes, _ := nodesBuilt(data)
		t.Logf("%-32s %6d bytes: %6d nodes, counted %6d (%.2f per node), %.2fx within MaxNodes",
			gen.name, len(data), nodes, b.units(), float64(b.units())/float64(nodes), float64(DefaultLimits.MaxNodes)/float64(b.units()))
		if b.units() > DefaultLimits.MaxNodes {
			t.Errorf("%s: counted %d, more than MaxNodes", gen.name, b.units())
		}
	}
}

// allocated is the bytes allocated by one call of f.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The bombs are refused before anything expands them: in memory of the
// order of their own size, not of what they expand to (25 MB, 10^9 nodes).
func TestBombsAreRefusedCheaply(t *testing.T) {
	for name, data := range map[string][]byte{"alias bomb": aliasBomb(), "laughs": laughs(9)} {
		n := allocated(func() {
			if _, err := Parse(data, allTokens); err == nil {
				t.Errorf("%s accepted", name)
			}
		})
		t.Logf("%s: %d bytes in, %d bytes allocated", name, len(data), n)
		if n > 2<<20 {
			t.Errorf("%s: %d bytes allocated", name, n)
		}
	}
}

// costShape is a YAML made of a unit repeated, the shape of a costly
// config.
type costShape struct {
	name             string
	head, unit, tail string
	numbered         bool // unit has a %d, the repetition's number
	maxRepeats       int  // 0: as many as fit
	staircase        bool // unit is indented one more space each time
	expands          bool // aliases: may be refused once expanded
}

func (s costShape) build(repeats int) []byte {
	var b strings.Builder
	b.WriteString(s.head)
	for i := range repeats {
		switch {
		case s.staircase:
			b.WriteString(strings.Repeat(" ", i) + s.unit)
		case s.numbered:
			fmt.Fprintf(&b, s.unit, i)
		default:
			b.WriteString(s.unit)
		}
	}
	b.WriteString(s.tail)
	return []byte(b.String())
}

// largest is the largest config of the shape Parse reads with limits: it
// is within MaxBytes, within MaxNodes before parsing, and (for the shapes
// of aliases) within MaxNodes expanded.
func (s costShape) largest(limits Limits) []byte {
	fits := func(repeats int) bool {
		data := s.build(repeats)
		if len(data) > limits.MaxBytes || boundYAML(data).units() > limits.MaxNodes {
			return false
		}
		if !s.expands {
			return true
		}
		_, err := ParseWithLimits(data, nil, limits)
		return err == nil || !strings.Contains(err.Error(), "expands to more than")
	}
	lo, hi := 0, limits.MaxBytes/len(s.unit)+1
	if s.maxRepeats > 0 {
		hi = min(hi, s.maxRepeats)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return s.build(lo)
}

// costShapes are the costliest shapes found for yaml.v3 and for Parse: per
// byte, per node, per comment, per level of nesting, per alias.
var costShapes = []costShape{
	{name: "null keys with comments", head: "x:\n", unit: "? #\n"},
	{name: "empty entries with comments", head: "x:\n", unit: "- #\n"},
	{name: "comments between empty entries", head: "x:\n", unit: "#\n-\n"},
	{name: "empty values with comments", head: "x:\n", unit: " a: #\n"},
	{name: "values with comments", unit: "a: b #\n"},
	{name: "comments in a flow list", head: "x: [\n", unit: "a, #\n", tail: "a]\n"},
	{name: "comments at two indents", head: "x:\n  y:\n    z:\n", unit: "#\n #\n"},
	{name: "comments under deep nesting", head: "x:\n" + strings.Repeat("- ", 4000) + "a\n", unit: "#\n #\n", tail: "y: z\n"},
	{name: "comment lines between entries", head: "x:\n", unit: "#" + strings.Repeat("c", 30) + "\n- "},
	{name: "empty entries", head: "x:\n", unit: "-\n"},
	{name: "empty keys", head: "x:\n", unit: "?\n"},
	{name: "empty values", unit: "a:\n"},
	{name: "keys and values", unit: "k%d: b\n", numbered: true},
	{name: "flow map of keys without values", head: "x: {", unit: "a,", tail: "a}\n"},
	{name: "flow map of empty values", head: "x: {", unit: "a: ,", tail: "}\n"},
	{name: "flow map of pairs", head: "x: {", unit: "a: a,", tail: "}\n"},
	{name: "flow map of explicit keys", head: "x: {", unit: "? a,", tail: "}\n"},
	{name: "flow list", head: "x: [", unit: "a,", tail: "a]\n"},
	{name: "flow list of empty lists", head: "x: [", unit: "[],", tail: "[]]\n"},
	{name: "flow list of empty maps", head: "x: [", unit: "{},", tail: "]\n"},
	{name: "flow list of single pairs", head: "x: [", unit: "a: b,", tail: "]\n"},
	{name: "flow list of empty pairs", head: "x: [", unit: "a: ,", tail: "]\n"},
	{name: "flow list of quoted flow YAML", head: "x: [", unit: "'a,a,a,a',", tail: "a]\n"},
	{name: "anchors", head: "x: [", unit: "&a a,", tail: "a]\n"},
	{name: "long anchors", head: "x: [", unit: "&" + strings.Repeat("a", 64) + "%d a,", numbered: true, tail: "a]\n"},
	{name: "aliases", head: "x: [&a a,", unit: "*a,", tail: "a]\n"},
	{name: "tags", head: "x: [", unit: "!!str a,", tail: "a]\n"},
	{name: "verbatim tags", head: "x: [", unit: "!<tag:" + strings.Repeat("a", 64) + "> a,", tail: "a]\n"},
	{name: "documents", unit: "---\n"},
	{name: "deep flow lists", unit: "[", tail: strings.Repeat("]", 9999), maxRepeats: 9999},
	{name: "deep flow lists over lines", unit: "[\n", tail: strings.Repeat("]", 9999), maxRepeats: 9999},
	{name: "deep flow maps", unit: "{", tail: strings.Repeat("}", 9999), maxRepeats: 9999},
	{name: "deep block lists on a line", unit: "- ", tail: "a\n", maxRepeats: 9999},
	{name: "deep block lists and flow lists", head: "x:\n", unit: "- ", tail: strings.Repeat("[", 9999) + strings.Repeat("]", 9999), maxRepeats: 9999},
	{name: "deep explicit keys on a line", unit: "? ", tail: "a\n", maxRepeats: 9999},
	{name: "deep block lists and keys", unit: "- ? ", tail: "a\n", maxRepeats: 4999},
	{name: "deep block lists over lines", unit: "-\n", staircase: true, maxRepeats: 1000},
	{name: "a long comment, then deep block lists", head: "x:\n#" + strings.Repeat("c", 200000) + "\n", unit: "- ", tail: "a\n", maxRepeats: 9999},
	{name: "a long scalar", head: "x: ", unit: "a", tail: "\n"},
	{name: "a long scalar of escapes", head: "x: \"", unit: `\x41`, tail: "\"\n"},
	{name: "a long block scalar", head: "x: |\n", unit: " a\n"},
	{name: "a long plain scalar over lines", head: "x: a\n", unit: " a\n"},
	{name: "crawlers that do not fit", head: "workspaces:\n  - name: w\n    crawlers:\n", unit: "      - {name: a, update_since: b, provider: {c: d}}\n"},
	{name: "crawlers without fields", head: "workspaces:\n  - name: w\n    crawlers: [", unit: "{provider: {}},", tail: "]\n"},
	{name: "idents as small flow maps", head: "workspaces:\n  - name: w\n    crawlers: []\n    idents: [", unit: "{ident: a, aliases: [a]},", tail: "]\n"},
	{name: "small workspaces", head: "workspaces: [", unit: "{name: a%d, crawlers: []},", numbered: true, tail: "]\n"},
	{name: "aliases of crawlers", head: "c: &c [" + strings.Repeat("{name: a, update_since: '2020-01-01', provider: {github_organization: o}},", 100) + "]\nworkspaces:\n", unit: "  - {name: w%d, crawlers: *c}\n", numbered: true, expands: true},
	{name: "aliases of idents", head: "i: &i [" + strings.Repeat("{ident: a, aliases: [a, b], groups: [g]},", 100) + "]\nworkspaces:\n", unit: "  - {name: w%d, crawlers: [], idents: *i}\n", numbered: true, expands: true},
	{name: "aliases of crawlers that do not fit", head: "c: &c [" + strings.Repeat("{provider: {}},", 100) + "]\nworkspaces:\n", unit: "  - {name: w%d, crawlers: *c}\n", numbered: true, expands: true},
	{name: "aliases of a scalar as ident aliases", head: "s: &s a\nworkspaces:\n  - name: w\n    crawlers: []\n    idents:\n      - ident: a\n        aliases: [", unit: "*s, ", tail: "a]\n", expands: true},
	{name: "comments, then aliases of idents", head: "x:\n  y:\n    z:\n" + strings.Repeat("#\n #\n", 7600) + "i: &i [" + strings.Repeat("{ident: a, aliases: [a, b], groups: [g]},", 100) + "]\nworkspaces:\n", unit: "  - {name: w%d, crawlers: [], idents: *i}\n", numbered: true, expands: true},
	{name: "flow map, then aliases of idents", head: "x: {" + strings.Repeat("a,", 28000) + "a}\ni: &i [" + strings.Repeat("{ident: a, aliases: [a, b], groups: [g]},", 10) + "]\nworkspaces:\n", unit: "  - {name: w%d, crawlers: [], idents: *i}\n", numbered: true, expands: true},
	{name: "%TAG directives", unit: "%%TAG !a%d! x\n", numbered: true, tail: "---\na\n"},
}

// maxParseAlloc is the goal: what Parse may allocate on any config.
const maxParseAlloc = 24 << 20

// parseCost bounds the bytes Parse allocates on any config of n bytes: what
// ParseCostOf may charge a config of that size (at most 5 counted nodes per
// byte, "????"). It is maxParseCost plus costBase from 9 KB on.
func parseCost(n int) int64 {
	perByte := int64(5*costPerCount + costPerByte + costPerFlowLevel)
	return min(perByte*int64(n)+costOfAliases, maxParseCost) + costBase
}

// ParseCostOf holds on the costliest shapes found, at their largest and at
// 16 KiB (where the cost per byte, not MaxNodes, bounds them), and on
// realistic configs; and the costliest is within maxParseAlloc. The table
// of the report: go test -v -run TestParseCost.
func TestParseCost(t *testing.T) {
	type row struct {
		name   string
		data   []byte
		alloc  uint64
		result string
	}
	var rows []row
	measure := func(name string, data []byte) {
		result := "accepted"
		alloc := allocated(func() {
			if _, err := Parse(data, allTokens); err != nil {
				result = cutText(err.Error(), 60)
			}
		})
		rows = append(rows, row{name, data, alloc, result})
	}
	for _, s := range costShapes {
		measure(s.name, s.largest(DefaultLimits))
		if testing.Short() {
			continue
		}
		small := DefaultLimits
		small.MaxBytes = 16 << 10
		if data := s.largest(small); len(data) <= small.MaxBytes {
			measure(s.name+", 16 KiB", data)
		}
	}
	for _, gen := range realisticConfigs {
		measure("realistic: "+gen.name, gen.make(MaxBytes))
	}
	measure("seed default", []byte(seedDefaultConfig))
	measure("alias bomb", aliasBomb())
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.alloc, a.alloc) })
	for _, r := range rows {
		costOf, cost := ParseCostOf(r.data), parseCost(len(r.data))
		t.Logf("%-48s %6d bytes %6d counted %8d allocated, ParseCostOf %8d  %s",
			r.name, len(r.data), boundYAML(r.data).units(), r.alloc, costOf, r.result)
		switch {
		case int64(r.alloc) > costOf:
			t.Errorf("%s: %d bytes allocated, ParseCostOf says %d", r.name, r.alloc, costOf)
		case costOf > cost:
			t.Errorf("%s: ParseCostOf says %d, more than parseCost's %d", r.name, costOf, cost)
		}
	}
	if parseCost(MaxBytes) > maxParseAlloc {
		t.Errorf("parseCost(MaxBytes) is %d, more than %d", parseCost(MaxBytes), maxParseAlloc)
	}
}

// The figures of the report: go test -run '^$' -bench . -benchmem
// ./internal/monocleconfig. Larger inputs than MaxBytes are read with
// ParseWithLimits and raised limits, to see what the parse of them costs.
func BenchmarkParse(b *testing.B) {
	oneMiB := Limits{MaxBytes: 1 << 20, MaxNodes: 1 << 20, MaxExpandedBytes: 4 << 20, MaxDepth: 1000}
	cases := []struct {
		name   string
		data   []byte
		limits Limits
	}{
		{"seed-default", []byte(seedDefaultConfig), DefaultLimits},
		{"alias-bomb-17KB", aliasBomb(), DefaultLimits},
		{"laughs-10^9", laughs(9), DefaultLimits},
		{"deep-999", nested(999), DefaultLimits},
		{"deep-10000-refused", nested(10000), DefaultLimits},
		{"flat-256KiB", flatConfig(MaxBytes), DefaultLimits},
		{"idents-256KiB", identsConfig(MaxBytes), DefaultLimits},
		{"flat-1MiB-refused-by-size", flatConfig(1 << 20), DefaultLimits},
		{"flat-1MiB-raised-limits", flatConfig(1 << 20), oneMiB},
		{"tiny-nodes-256KiB-refused-before-parsing", tinyNodes(MaxBytes), DefaultLimits},
		{"comment-lines-256KiB-refused-before-parsing", []byte("x:\n" + strings.Repeat("- #\n", (MaxBytes-100)/4)), DefaultLimits},
		// The non-specific tag given back (hsyaml.go): as many "! 1" as
		// MaxNodes lets through, in lines and in one flow line after
		// multibyte text, and the same without the tag.
		{"bang-lines-largest-accepted", []byte("workspaces: []\nx:\n" + strings.Repeat("- ! 1\n", 21000)), DefaultLimits},
		{"bang-flow-largest-accepted", []byte("workspaces: []\nx: [" + strings.Repeat("é, ! 1, ", 10800) + "1]\n"), DefaultLimits},
		{"flow-without-bang", []byte("workspaces: []\nx: [" + strings.Repeat("é, 1, ", 10800) + "1]\n"), DefaultLimits},
	}
	for _, s := range costShapes {
		if s.name == "comments under deep nesting" || s.name == "flow map of keys without values" || s.name == "deep block lists and flow lists" {
			cases = append(cases, struct {
				name   string
				data   []byte
				limits Limits
			}{strings.ReplaceAll(s.name, " ", "-") + "-largest-accepted", s.largest(DefaultLimits), DefaultLimits})
		}
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = ParseWithLimits(c.data, allTokens, c.limits)
			}
		})
	}
}
