package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Every test SECURITY.md names as the proof of a promise exists.
func TestSecurityNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1)
	if len(names) < 10 {
		t.Fatalf("SECURITY.md names %d tests: the pattern reads the wrong thing", len(names))
	}
	for _, m := range names {
		out, _ := exec.Command("git", "grep", "-l", "func "+m[1]+"(", "--", "*_test.go").Output()
		if strings.TrimSpace(string(out)) == "" {
			t.Errorf("SECURITY.md names %s, which no test file defines", m[1])
		}
	}
}
