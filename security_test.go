package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Every test SECURITY.md and docs/security.md name as the proof of a
// promise exists, and so does every test file they name.
func TestSecurityNamesRealTests(t *testing.T) {
	for _, file := range []string{"SECURITY.md", "docs/security.md"} {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		names := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1)
		if len(names) < 10 {
			t.Fatalf("%s names %d tests: the pattern reads the wrong thing", file, len(names))
		}
		for _, m := range names {
			out, _ := exec.Command("git", "grep", "-l", "func "+m[1]+"(", "--", "*_test.go").Output()
			if strings.TrimSpace(string(out)) == "" {
				t.Errorf("%s names %s, which no test file defines", file, m[1])
			}
		}
		for _, m := range regexp.MustCompile("`([-a-z0-9_/]+_test\\.go)`").FindAllStringSubmatch(string(doc), -1) {
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("%s names %s: %v", file, m[1], err)
			}
		}
	}
}
