package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds every non-test function of the service and of the
// kubectl plugin: a longer one is split into named steps, so that a reader
// follows a request or a command one step at a time.
const maxFuncLines = 60

// Every non-test function declaration of this module and of
// kubectl-monocle's is within maxFuncLines lines (the test and build
// tooling, e2e/ and tools/, is not held to it).
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	files, pluginFiles := 0, 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (path == "e2e" || path == "tools" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if strings.HasPrefix(path, "kubectl-monocle/") {
			pluginFiles++
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			from, to := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
			if n := to - from + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it into named steps", fset.Position(fn.Pos()), fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 || pluginFiles == 0 {
		t.Fatalf("%d Go files found, %d of the plugin: the test reads the wrong place", files, pluginFiles)
	}
}
