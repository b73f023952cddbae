package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers ranks every package of this module: a package imports only
// packages of a lower rank, so that no import runs back up or sideways
// (two parts of one rank know nothing of each other). Rank 0 are the
// leaves, which import none of the project. A new package gets its row
// here; ARCHITECTURE.md says where it goes.
var layers = map[string]int{
	"api/v1alpha1":           0,
	"crd":                    0,
	"hook/check":             0,
	"hook/condition":         1,
	"hook/wire":              1,
	"internal/command":       0,
	"internal/elasticusers":  0,
	"internal/floor":         0,
	"internal/instance":      0,
	"internal/mcapply":       0,
	"internal/printable":     0,
	"internal/testbodies":    0,
	"internal/fakerealm":     1,
	"internal/monoclesearch": 1,
	"internal/monocleconfig": 2,
	"internal/elasticproxy":  2,
	"hook/applied":           2,
	"hook/child":             2,
	"internal/snapshot":      2,
	"observability":          2, // its tests read hook/condition's reasons
	"internal/restorejob":    3,
	"internal/restorerecord": 3,
	"hook/access":            3,
	"hook/elastic":           3,
	"hook/pods":              3,
	"hook":                   4,
	"internal/janitorjob":    4,
	"hook/server":            5,
	".":                      6,
	"tools/loadtest":         6,
}

// The layers hold in the module as `go list` reads it (test files
// included: a test may not reach up either).
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkg := relative(p.ImportPath)
		imports[pkg] = nil
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				imports[pkg] = append(imports[pkg], relative(imp))
			}
		}
	}
	if len(imports) < 15 {
		t.Fatalf("go list read %d packages: the test reads the wrong place", len(imports))
	}
	for _, problem := range layerProblems(layers, imports) {
		t.Error(problem)
	}
}

const module = "github.com/change-metrics/monocle-hook"

// relative is a package's path in the module ("." for its root).
func relative(importPath string) string {
	return cmp.Or(strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/"), ".")
}

// layerProblems lists each package with no rank, and each import of a
// package that is not of a lower rank.
func layerProblems(layers map[string]int, imports map[string][]string) []string {
	var problems []string
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		rank, ok := layers[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s has no rank in layers_test.go", pkg))
			continue
		}
		for _, imp := range imports[pkg] {
			if imp == pkg {
				continue // an external test package of its own package
			}
			if r, ok := layers[imp]; ok && r >= rank {
				problems = append(problems, fmt.Sprintf("%s (rank %d) imports %s (rank %d): a package imports only a lower rank", pkg, rank, imp, r))
			}
		}
	}
	return problems
}

// The check refuses a sideways import (a part importing another part of
// its rank), a leaf importing a part, and a package it does not know.
func TestLayerProblems(t *testing.T) {
	layers := map[string]int{"leaf": 0, "part/a": 1, "part/b": 1, "hook": 2}
	tests := map[string]struct {
		imports map[string][]string
		want    int
	}{
		"downwards only":        {map[string][]string{"hook": {"part/a", "part/b", "leaf"}, "part/a": {"leaf"}, "leaf": nil}, 0},
		"a part imports a part": {map[string][]string{"part/a": {"part/b"}}, 1},
		"a leaf imports a part": {map[string][]string{"leaf": {"part/a"}}, 1},
		"a part imports up":     {map[string][]string{"part/b": {"hook"}}, 1},
		"a package unranked":    {map[string][]string{"new": {"leaf"}}, 1},
	}
	for name, tc := range tests {
		if got := layerProblems(layers, tc.imports); len(got) != tc.want {
			t.Errorf("%s: %d problems %q, want %d", name, len(got), got, tc.want)
		}
	}
}
