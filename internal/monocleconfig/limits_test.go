package monocleconfig

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// aliasBomb is issue 10's: one 10,000-byte scalar and a list of 2,500
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
			problem: "the YAML expands to more than 1048576 bytes of text",
		},
		"nine levels of aliases of aliases": {
			data:    laughs(9),
			limits:  DefaultLimits,
			problem: "the YAML expands to more than 131072 nodes",
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
		"more nodes than MaxNodes": {
			data:    tinyNodes(4096),
			limits:  Limits{MaxBytes: MaxBytes, MaxNodes: 1000, MaxExpandedBytes: MaxBytes, MaxDepth: 10},
			problem: "the YAML expands to more than 1000 nodes",
		},
		"a realistic config of MaxBytes": {
			data:   flatConfig(MaxBytes),
			limits: DefaultLimits,
		},
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

// ParseCost holds on the costliest shapes found, and on realistic configs
// (64 KiB of each: the cost per byte does not depend on the size).
func TestParseCost(t *testing.T) {
	const size = 64 << 10
	fill := func(head, unit string) []byte {
		return []byte(seedDefaultConfig + head + strings.Repeat(unit, size/len(unit)))
	}
	tests := map[string][]byte{
		"seed default":                   []byte(seedDefaultConfig),
		"realistic":                      flatConfig(size),
		"null keys with comments":        fill("x:\n", "? #\n"),
		"empty entries with comments":    fill("x:\n", "- #\n"),
		"comments between empty entries": fill("x:\n", "#\n-\n"),
		"empty values with comments":     fill("x:\n", " a: #\n"),
		"a flow map of empty values":     tinyNodes(size),
		"nested flow lists":              fill("x:\n", "- "+strings.Repeat("[", 100)+strings.Repeat("]", 100)+"\n"),
		"alias bomb":                     aliasBomb(),
		"deep":                           nested(10000),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			n := allocated(func() { _, _ = Parse(data, allTokens) })
			t.Logf("%d bytes: %d allocated, %.0f per byte", len(data), n, float64(n)/float64(len(data)))
			if int64(n) > ParseCost(len(data)) {
				t.Errorf("%d bytes allocated, ParseCost says %d", n, ParseCost(len(data)))
			}
		})
	}
}

// The figures of the report: go test -run '^$' -bench . -benchmem
// ./internal/monocleconfig. Larger inputs than MaxBytes are read with
// ParseWithLimits and raised limits, to see what the parse of them costs.
func BenchmarkParse(b *testing.B) {
	oneMiB := Limits{MaxBytes: 1 << 20, MaxNodes: 1 << 20, MaxExpandedBytes: 4 << 20, MaxDepth: 1000}
	comments := []byte(seedDefaultConfig + "x:\n" + strings.Repeat("- #\n", (MaxBytes-100)/4))
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
		{"flat-1MiB-refused-by-size", flatConfig(1 << 20), DefaultLimits},
		{"flat-1MiB-raised-limits", flatConfig(1 << 20), oneMiB},
		{"tiny-nodes-256KiB-refused", tinyNodes(MaxBytes), DefaultLimits},
		{"comment-lines-256KiB", comments, DefaultLimits},
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
