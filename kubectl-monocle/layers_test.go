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

// roles are the plugin's packages: one package per command, which imports
// the shared ones but never another command; the shared ones, which
// import no command; and main, which adds every command to the root. A
// new package gets its row here.
var roles = map[string]role{
	".":                   rootRole,
	"internal/backup":     commandRole,
	"internal/check":      commandRole,
	"internal/janitor":    commandRole,
	"internal/restore":    commandRole,
	"internal/status":     commandRole,
	"internal/plugin":     sharedRole,
	"internal/monocleapi": sharedRole,
	"internal/plugintest": testRole,
}

type role int

const (
	sharedRole  role = iota // imports no command
	testRole                // a shared helper of tests only: no package's own code imports it
	commandRole             // imports the shared packages, never another command
	rootRole                // main: imports every command
)

// pluginImports are a package's imports of the plugin's own packages.
type pluginImports struct {
	code  []string // of its own code
	tests []string // of its tests, internal and external
}

// The import directions hold in the plugin's module as `go list` reads it
// (test files included: a test may not reach another command either).
func TestImportDirections(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string]pluginImports{}
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		imports[relative(p.ImportPath)] = pluginImports{code: ours(p.Imports), tests: ours(slices.Concat(p.TestImports, p.XTestImports))}
	}
	if len(imports) < len(roles) {
		t.Fatalf("go list read %d packages: the test reads the wrong place", len(imports))
	}
	for _, problem := range directionProblems(roles, imports) {
		t.Error(problem)
	}
}

const pluginModule = "github.com/change-metrics/monocle-hook/kubectl-monocle"

// ours are the imports of the plugin's own packages, relative.
func ours(imports []string) []string {
	var out []string
	for _, imp := range imports {
		if imp == pluginModule || strings.HasPrefix(imp, pluginModule+"/") {
			out = append(out, relative(imp))
		}
	}
	return out
}

// relative is a package's path in the plugin's module ("." for main).
func relative(importPath string) string {
	return cmp.Or(strings.TrimPrefix(strings.TrimPrefix(importPath, pluginModule), "/"), ".")
}

// directionProblems lists each package with no role, each command that
// imports another or not internal/plugin, each shared package that
// imports a command or main, each package's own code that imports a
// test helper, and each command main does not import.
func directionProblems(roles map[string]role, imports map[string]pluginImports) []string {
	var problems []string
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		r, ok := roles[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s has no role in layers_test.go", pkg))
			continue
		}
		imps := imports[pkg]
		for _, imp := range imps.code {
			if roles[imp] == testRole && imp != pkg {
				problems = append(problems, fmt.Sprintf("%s imports %s, a helper of tests only, outside its tests", pkg, imp))
			}
		}
		for _, imp := range slices.Concat(imps.code, imps.tests) {
			switch {
			case imp == pkg: // an external test package of its own package
			case roles[imp] == rootRole:
				problems = append(problems, fmt.Sprintf("%s imports main", pkg))
			case r != rootRole && roles[imp] == commandRole:
				problems = append(problems, fmt.Sprintf("%s imports the command %s: only main imports a command", pkg, imp))
			}
		}
		if r == commandRole && !slices.Contains(imps.code, "internal/plugin") {
			problems = append(problems, fmt.Sprintf("the command %s does not import internal/plugin", pkg))
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(roles)) {
		if roles[pkg] == commandRole && !slices.Contains(imports["."].code, pkg) {
			problems = append(problems, fmt.Sprintf("main does not import the command %s", pkg))
		}
	}
	return problems
}

// The check refuses a command importing another (in its code or its
// tests), a shared package importing a command, code importing a test
// helper, a command main leaves out, and a package it does not know.
func TestDirectionProblems(t *testing.T) {
	roles := map[string]role{".": rootRole, "a": commandRole, "b": commandRole, "internal/plugin": sharedRole, "fakes": testRole}
	good := func() map[string]pluginImports {
		return map[string]pluginImports{
			".":               {code: []string{"a", "b", "internal/plugin"}},
			"a":               {code: []string{"internal/plugin"}, tests: []string{"fakes"}},
			"b":               {code: []string{"internal/plugin"}},
			"internal/plugin": {tests: []string{"internal/plugin", "fakes"}},
			"fakes":           {code: []string{"internal/plugin"}},
		}
	}
	tests := map[string]struct {
		change func(map[string]pluginImports)
		want   int
	}{
		"as it should be":             {func(map[string]pluginImports) {}, 0},
		"a command imports a command": {func(m map[string]pluginImports) { m["a"] = pluginImports{code: []string{"internal/plugin", "b"}} }, 1},
		"a command's test imports one": {func(m map[string]pluginImports) {
			m["b"] = pluginImports{code: []string{"internal/plugin"}, tests: []string{"a"}}
		}, 1},
		"a shared package imports one":   {func(m map[string]pluginImports) { m["internal/plugin"] = pluginImports{code: []string{"a"}} }, 1},
		"a helper of tests imports main": {func(m map[string]pluginImports) { m["fakes"] = pluginImports{code: []string{"."}} }, 1},
		"code imports a helper of tests": {func(m map[string]pluginImports) { m["b"] = pluginImports{code: []string{"internal/plugin", "fakes"}} }, 1},
		"a command without the shared":   {func(m map[string]pluginImports) { m["b"] = pluginImports{} }, 1},
		"main leaves a command out":      {func(m map[string]pluginImports) { m["."] = pluginImports{code: []string{"a", "internal/plugin"}} }, 1},
		"a package without a role":       {func(m map[string]pluginImports) { m["new"] = pluginImports{} }, 1},
	}
	for name, tc := range tests {
		imports := good()
		tc.change(imports)
		if got := directionProblems(roles, imports); len(got) != tc.want {
			t.Errorf("%s: %d problems %q, want %d", name, len(got), got, tc.want)
		}
	}
}
