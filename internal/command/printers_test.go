package command_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/internal/command"
)

// Every command in what the Job printers print (their golden outputs)
// and in the hook's golden answers is one of command.Forms; the hook's
// tests hold every answer they get to the same (checkPrinted).
func TestPrintedOutputsUseForms(t *testing.T) {
	var files []string
	for _, glob := range []string{"../restorejob/testdata/*.yaml", "../janitorjob/testdata/*.yaml", "../../hook/testdata/golden/*.json"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	commands := 0
	for _, f := range files {
		if filepath.Base(f) == "objects.yaml" { // the janitor's input
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if filepath.Ext(f) == ".json" {
			var answer struct {
				Status struct{ Conditions []struct{ Message string } }
			}
			if err := json.Unmarshal(b, &answer); err != nil {
				t.Fatal(err)
			}
			lines = nil
			for _, c := range answer.Status.Conditions {
				lines = append(lines, c.Message)
			}
		}
		for _, line := range lines {
			commands += strings.Count(line, "kubectl")
			// A comment's own words after a command: "# COMPLETIONS 1/1",
			// "# this output, saved as janitor.yaml".
			if i := strings.Index(line, "  #"); i > 0 {
				line = line[:i]
			}
			if rest := command.Strip(line); strings.Contains(rest, "kubectl") {
				t.Errorf("%s prints a command that is not one of command.Forms:\n%s", f, rest)
			}
		}
	}
	if commands == 0 {
		t.Fatal("no command found: the outputs moved")
	}
}
