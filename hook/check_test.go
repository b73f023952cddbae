package hook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/hook/condition"
)

// Check lists exactly the Monocles an upgrade would hold, whatever holds
// their config (the spec, or the generated ConfigMap beside them), and
// those stored before a bound or rule of the CRD that they break.
func TestCheck(t *testing.T) {
	objects, err := os.ReadFile("testdata/check-objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(objects, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 10 {
		t.Errorf("%d Monocles checked, want 10", rep.Checked)
	}
	var got []string
	for _, r := range rep.Refusals {
		got = append(got, r.Namespace+"/"+r.Name+" "+r.Reason)
	}
	if want := []string{"a/bad ConfigInvalid", "b/edited ConfigInvalid", "b/old-bounds InvalidSpec", "c/no-token CrawlerTokenMissing", "d/ghcrts VariableRefused"}; !slices.Equal(got, want) {
		t.Errorf("refusals %v, want %v", got, want)
	}
	// Every example passes, but for the objects it names, not given here.
	for _, f := range mustGlob(t, "../examples/monocle-*.yaml") {
		b, _ := os.ReadFile(f)
		r, err := Check(b, testEnv())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range r.Refusals {
			if r.Reason != condition.ReasonReferenceNotFound {
				t.Errorf("%s: %v", f, r)
			}
		}
	}
	// An older default image running, no image of its own: it rolls; so
	// does an API whose public URL loses its trailing slash.
	// And a managed Elasticsearch without its users' Secret turns its
	// security on.
	want := []Roll{
		{"b", "old-image", "Elasticsearch and the API", "no authentication", "each client its own user (Secret old-image-elastic)", "Elasticsearch's security"},
		{"b", "old-image", "the API and the crawler", "quay.io/change-metrics/monocle:1.10.0", DefaultImage, "the new default image"},
		{"b", "slash", "the API", "https://monocle.example.com/", "https://monocle.example.com", "its public URL as Monocle serves it"},
	}
	if !slices.Equal(rep.Rolls, want) {
		t.Errorf("rolls %v, want %v", rep.Rolls, want)
	}
	if _, err := Check([]byte("kind: [unclosed"), testEnv()); err == nil {
		t.Error("broken YAML: no error")
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v", pattern, err)
	}
	return files
}

// A Monocle whose status is not of its spec (Metacontroller stalled: down,
// or its ClusterRole lacking a new kind) is not applied, whatever its
// conditions say: check says so, with the likely causes; a new one only
// after SyncGrace, and one read from a file without generation never.
func TestCheckNotSynced(t *testing.T) {
	monocle := func(name, meta, status string) string {
		return "---\napiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: " + name + ", namespace: a" + meta + "}\nspec: {}\nstatus: " + status + "\n"
	}
	applied := "{observedGeneration: 2, conditions: [{type: SpecApplied, status: 'True', reason: Applied, message: '', lastTransitionTime: '2026-11-30T00:00:00Z'}]}"
	created := func(ago time.Duration) string {
		return ", creationTimestamp: '" + testNow.Add(-ago).Format(time.RFC3339) + "'"
	}
	objects := monocle("behind", ", generation: 3"+created(time.Hour), applied) +
		monocle("synced", ", generation: 2"+created(time.Hour), applied) +
		monocle("never", ", generation: 1"+created(SyncGrace), "{}") +
		monocle("new", ", generation: 1"+created(SyncGrace-time.Second), "{}") +
		monocle("from-a-file", "", "{}")
	rep, err := Check([]byte(objects), testEnv())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Refusals {
		got = append(got, r.Name+" "+r.Reason)
		if !strings.Contains(r.Message, "Likely causes: Metacontroller does not run; or it cannot sync Monocles, its ClusterRole lacking a kind of child") {
			t.Errorf("%s: %s", r.Name, r.Message)
		}
	}
	if want := []string{"behind NotSynced", "never NotSynced"}; !slices.Equal(got, want) {
		t.Errorf("refusals %v, want %v", got, want)
	}
	if !strings.Contains(rep.Refusals[0].Message, "its status is of generation 2, its spec of 3") || !strings.Contains(rep.Refusals[1].Message, "no status 2m0s after its creation") {
		t.Errorf("%v", rep.Refusals)
	}
	var out strings.Builder
	rep.Print(&out)
	if !strings.HasSuffix(out.String(), "Monocles checked: 5; applied in full: 3; not: 2; rolled: 0\n") {
		t.Errorf("report:\n%s", out.String())
	}
}
