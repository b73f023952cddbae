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

// maxFuncLines bounds every non-test function of the plugin's module: a
// longer one is split into named steps, so that a reader follows a command
// one step at a time.
const maxFuncLines = 60

// Every non-test function declaration of the plugin's module, in
// every package under this folder, is within maxFuncLines lines.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
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
	if files == 0 {
		t.Fatal("no Go file found: the test covers nothing")
	}
}
