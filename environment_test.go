package main

import (
	"os"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/hook/pods"
)

// docs/configuration.md's table of the pods' environment is pods.Environment.
func TestEnvironmentTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| variable | read by | set | why |\n|---|---|---|---|\n")
	for _, v := range pods.Environment {
		b.WriteString("| `" + v.Name + "` | " + v.ReadBy + " | " + v.Set + " | " + strings.ReplaceAll(v.Why, "|", `\|`) + " |\n")
	}
	readme, err := os.ReadFile("docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- environment table: pods.Environment -->\n", "<!-- end of the environment table -->"
	_, rest, ok := strings.Cut(string(readme), begin)
	table, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/configuration.md has no %q ... %q", begin, end)
	}
	if table != b.String() {
		t.Errorf("docs/configuration.md's environment table is not pods.Environment's; it should read:\n%s", b.String())
	}
}
