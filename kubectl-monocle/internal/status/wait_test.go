package status

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

// monocleAt is a Monocle of generation gen whose status is of observed,
// with SpecApplied and Ready as given (each "status reason").
func monocleAt(gen, observed int, spec, ready string) string {
	cond := func(t, sr string) string {
		s, r, _ := strings.Cut(sr, " ")
		return fmt.Sprintf("  - {type: %s, status: %q, reason: %s, message: %q, observedGeneration: %d, lastTransitionTime: \"2026-12-01T00:00:00Z\"}\n", t, s, r, t+" says why", observed)
	}
	return fmt.Sprintf("apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: m, namespace: ns, generation: %d}\n"+
		"status:\n  observedGeneration: %d\n  conditions:\n%s%s", gen, observed, cond("SpecApplied", spec), cond("Ready", ready))
}

// status --wait: at once when applied and serving; at once, 1, on a
// refusal only an edit fixes; 1 when it times out, saying why; and once
// the change is synced and ready, 0, whenever that comes.
func TestStatusWait(t *testing.T) {
	for name, tc := range map[string]struct {
		monocle string
		code    int
		says    string // on stderr
	}{
		"applied and ready":          {monocleAt(2, 2, "True Applied", "True AllComponentsReady"), 0, ""},
		"refused":                    {monocleAt(2, 2, "False ConfigInvalid", "False ConfigInvalid"), 1, "SpecApplied is False, ConfigInvalid: SpecApplied says why: only an edit of the spec changes that"},
		"not synced":                 {monocleAt(2, 1, "True Applied", "True AllComponentsReady"), 1, "not applied and serving after 1s: its status is of generation 1, its spec of 2: not synced yet"},
		"a Secret to create":         {monocleAt(2, 2, "False ReferenceNotFound", "True AllComponentsReady"), 1, "after 1s: SpecApplied is False, ReferenceNotFound"},
		"rolling out":                {monocleAt(2, 2, "True Applied", "False ComponentsNotReady"), 1, "after 1s: Ready is False, ComponentsNotReady"},
		"conditions of an older one": {strings.ReplaceAll(monocleAt(2, 2, "True Applied", "True AllComponentsReady"), "observedGeneration: 2,", "observedGeneration: 1,"), 1, "no SpecApplied condition of generation 2 yet"},
	} {
		t.Run(name, func(t *testing.T) {
			c := &plugin.Clients{Dyn: plugintest.FakeCluster(t, tc.monocle)}
			code, stdout, stderr := runWith(c, "status", "m", "-n", "ns", "--wait", "--timeout", "1s")
			if code != tc.code || !strings.Contains(stderr, tc.says) || !strings.Contains(stdout, "Monocle ns/m (generation 2") {
				t.Errorf("exit %d, want %d saying %q\n%s%s", code, tc.code, tc.says, stdout, stderr)
			}
		})
	}

	// Synced, then ready, while it waits.
	dyn := plugintest.FakeCluster(t, monocleAt(2, 1, "True Applied", "True AllComponentsReady"))
	steps := []string{monocleAt(2, 2, "True Applied", "False ComponentsNotReady"), monocleAt(2, 2, "True Applied", "True AllComponentsReady")}
	gets := 0
	dyn.PrependReactor("get", "monocles", func(k8stesting.Action) (bool, runtime.Object, error) {
		gets++
		if gets == 1 {
			return false, nil, nil
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(steps[min(gets-2, len(steps)-1)]), &u.Object); err != nil {
			t.Fatal(err)
		}
		return true, u, nil
	})
	code, stdout, stderr := runWith(&plugin.Clients{Dyn: dyn}, "status", "m", "-n", "ns", "--wait", "--timeout", "1m")
	if code != 0 || gets < 3 || !strings.Contains(stdout, "AllComponentsReady") {
		t.Errorf("exit %d after %d reads\n%s%s", code, gets, stdout, stderr)
	}
}

// A Monocle Metacontroller has not synced since its last edit, or never
// (after hook.SyncGrace), is said to be not synced, with the likely causes;
// a new one within the grace is not.
func TestStatusNotSynced(t *testing.T) {
	for name, tc := range map[string]struct {
		monocle string
		says    string
	}{
		"behind": {monocleAt(3, 2, "True Applied", "True AllComponentsReady"), "NOT SYNCED: its status is of generation 2, its spec of 3: its last change is not applied. Likely causes: Metacontroller does not run"},
		"never": {"apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: m, namespace: ns, generation: 1, creationTimestamp: '" +
			now.Add(-time.Hour).Format(time.RFC3339) + "'}\n", "NOT SYNCED: it has no status 2m0s after its creation: it was never synced."},
		"new": {"apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: m, namespace: ns, generation: 1, creationTimestamp: '" +
			now.Add(-time.Minute).Format(time.RFC3339) + "'}\n", ""},
		"synced": {monocleAt(3, 3, "True Applied", "True AllComponentsReady"), ""},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := readStatus(context.Background(), &plugin.Clients{Dyn: plugintest.FakeCluster(t, tc.monocle)}, "ns", "m", now)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			if err := printStatus(&out, st, ""); err != nil {
				t.Fatal(err)
			}
			if tc.says == "" && (st.NotSynced != "" || strings.Contains(out.String(), "NOT SYNCED")) || !strings.Contains(out.String(), tc.says) {
				t.Errorf("want %q:\n%s", tc.says, out.String())
			}
		})
	}
}
