package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ARCHITECTURE.md names every file of the hook's code, and names only files
// that exist: a file added, renamed or deleted must find its place there.
func TestArchitectureNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([\\w./]+\\.go)`").FindAllStringSubmatch(string(doc), -1) {
		named[filepath.Base(m[1])] = true
	}
	var files []string
	exists := map[string]bool{}
	for _, dir := range []string{".", "hook"} {
		matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range matches {
			exists[filepath.Base(f)] = true
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, filepath.Base(f))
			}
		}
	}
	if len(files) < 20 {
		t.Fatalf("only %d files found: the test reads the wrong place", len(files))
	}
	for _, f := range files {
		if !named[f] {
			t.Errorf("%s is not in ARCHITECTURE.md", f)
		}
	}
	for f := range named {
		if !exists[f] && !strings.Contains(string(doc), "/"+f) {
			t.Errorf("ARCHITECTURE.md names %s, which is not a file of the hook or main", f)
		}
	}
}

// No function of the service is over 60 lines, so that each can be read
// at once.
func TestFunctionsAreShort(t *testing.T) {
	const maxLines = 60
	dirs := []string{".", "hook", "api/v1alpha1", "crd"}
	internal, err := filepath.Glob("internal/*")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	funcs := 0
	for _, dir := range append(dirs, internal...) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
					funcs++
					if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxLines {
						t.Errorf("%s: %s is %d lines, over %d", f, fn.Name.Name, n, maxLines)
					}
				}
			}
		}
	}
	if funcs < 300 {
		t.Fatalf("only %d functions read: the test reads the wrong place", funcs)
	}
}
