package condition

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/status.md's table of reasons is condition.Reasons: a row per
// reason, as Reasons says it, and no other.
func TestStatusDocHasEveryReason(t *testing.T) {
	b, err := os.ReadFile("../../docs/status.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := regexp.MustCompile("^\\| `([A-Za-z]+)` \\|").FindStringSubmatch(line); m != nil {
			if rows[m[1]] != "" {
				t.Errorf("docs/status.md has two rows for %s", m[1])
			}
			rows[m[1]] = line
		}
	}
	for _, r := range Reasons {
		want := "| `" + r.Name + "` | `" + strings.Join(r.In, "`, `") + "` | " + r.Means + " |"
		if rows[r.Name] != want {
			t.Errorf("docs/status.md's row of %s:\n  %s\nwant (from condition.Reasons):\n  %s", r.Name, rows[r.Name], want)
		}
		delete(rows, r.Name)
	}
	for name := range rows {
		t.Errorf("docs/status.md has a row for %s, which is not in condition.Reasons", name)
	}
}

// Every reason is one constant, with one line, given with conditions this
// package defines.
func TestReasonsAreOneEach(t *testing.T) {
	types := []string{ConditionReady, ConditionProgressing, ConditionSpecApplied, ConditionIdentsUpdated, ConditionSnapshotsHealthy}
	var names []string
	for _, r := range Reasons {
		if slices.Contains(names, r.Name) {
			t.Errorf("%s has two lines", r.Name)
		}
		names = append(names, r.Name)
		if r.Means == "" || len(r.In) == 0 {
			t.Errorf("%s: no meaning or no condition", r.Name)
		}
		for _, in := range r.In {
			typ, status, _ := strings.Cut(in, "=")
			if !slices.Contains(types, typ) || !slices.Contains([]string{"True", "False", "Unknown"}, status) {
				t.Errorf("%s is given with %q, no condition of a Monocle", r.Name, in)
			}
		}
		if Explain(r.Name) != r.Means {
			t.Errorf("Explain(%s) = %q", r.Name, Explain(r.Name))
		}
	}
	if Explain("NoSuchReason") != "" {
		t.Error("a reason not in the table is explained")
	}
}
