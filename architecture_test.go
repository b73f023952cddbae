package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ARCHITECTURE.md's steps for a new child kind name files that exist and,
// in them, the names they point to.
func TestArchitectureNewChildKind(t *testing.T) {
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, item, ok := strings.Cut(string(b), "\n- A new child kind:")
	if !ok {
		t.Fatal(`ARCHITECTURE.md has no "- A new child kind:" item`)
	}
	item, _, _ = strings.Cut(item, "\n- ")
	var files, words []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(item, -1) {
		switch tok := m[1]; {
		case strings.Contains(tok, " "): // a command
		case strings.Contains(tok, "/") || strings.HasSuffix(tok, ".go") || strings.HasSuffix(tok, ".yaml"):
			path := tok
			if !strings.Contains(tok, "/") {
				path = filepath.Join("hook", tok) // hook's own
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("ARCHITECTURE.md names %s: %v", tok, err)
			}
			files = append(files, path)
		default:
			words = append(words, tok)
		}
	}
	for _, w := range words {
		found := slices.ContainsFunc(files, func(f string) bool {
			b, _ := os.ReadFile(f)
			return regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).Match(b)
		})
		if !found {
			t.Errorf("ARCHITECTURE.md names %s, in none of %v", w, files)
		}
	}
}
