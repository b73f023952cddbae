package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The Dockerfile copies, and .dockerignore lets through, every package the
// binary links and every file it embeds: `make docker-image` builds.
func TestDockerBuildContext(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if .Module.Main}}{{.Dir}}{{range .EmbedFiles}} {{.}}{{end}}{{"\n"}}{{end}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	root, _ := os.Getwd()
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^COPY (\S+) \./(\S*)$`).FindAllStringSubmatch(string(dockerfile), -1) {
		copied[strings.TrimSuffix(m[1], "/")] = true
	}
	included := strings.Fields(string(ignore))
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		dir, err := filepath.Rel(root, fields[0])
		if err != nil {
			t.Fatal(err)
		}
		top := strings.Split(dir, string(filepath.Separator))[0]
		if top == "." { // main: COPY *.go, and each file it embeds
			for _, f := range fields[1:] {
				if !copied[f] || !slices.Contains(included, "!"+f) {
					t.Errorf("main embeds %s, which the Dockerfile does not copy (COPY %s ./%s) or .dockerignore leaves out (add !%s)", f, f, filepath.Dir(f)+"/", f)
				}
			}
			continue
		}
		if !copied[top] {
			t.Errorf("the binary links %s, which the Dockerfile does not copy (COPY %s ./%s)", dir, top, top)
		}
		if !slices.Contains(included, "!"+top+"/") {
			t.Errorf("the binary links %s, which .dockerignore leaves out (add !%s/)", dir, top)
		}
		for _, f := range fields[1:] {
			if strings.HasSuffix(f, "_test.go") || strings.Contains(f, "testdata") {
				t.Errorf("%s embeds %s, which .dockerignore leaves out", dir, f)
			}
		}
	}
	if !strings.Contains(string(dockerfile), "COPY *.go ./") || !slices.Contains(included, "!*.go") {
		t.Error("the main package's files are not copied")
	}
}
