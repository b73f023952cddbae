package e2e

import (
	"slices"
	"strings"
	"testing"
)

// TestKubectlGetMonocles: `kubectl get mon` (the short name) says whether
// each Monocle is ready, why not, and whether its spec is applied; -o wide
// adds the Ready message and the API's image. A new Monocle whose config
// is refused is not ready for that refusal; a running one whose edit is
// refused serves its last applied state: Ready, with the refusal in SPEC.
func TestKubectlGetMonocles(t *testing.T) {
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	refused := "workspaces:\n  - name: my team\n    crawlers: []\n"
	d.createMonocle("refused", map[string]any{"publicURL": "http://refused.example.com", "config": refused})
	d.converge("refused")

	d.createMonocle("running", map[string]any{"publicURL": "http://running.example.com", "crawler": map[string]any{"enabled": false}})
	d.converge("running")
	d.markReady("StatefulSet.apps/v1", "running-elastic")
	d.markReady("Deployment.apps/v1", "running-api")
	d.converge("running")
	d.setSpec("running", map[string]any{"publicURL": "http://running.example.com", "crawler": map[string]any{"enabled": false}, "config": refused})
	d.converge("running")

	kubeconfig := adminKubeconfig(t, "kubectl-columns")
	for _, tc := range []struct {
		name, args string
		header     []string
		rows       map[string][]string
	}{
		{"default", "", []string{"NAME", "READY", "REASON", "SPEC", "URL", "AGE"}, map[string][]string{
			// No URL: its status says what runs, and no API does.
			"refused": {"False", "ConfigInvalid", "ConfigInvalid"},
			"running": {"True", "AllComponentsReady", "ConfigInvalid", "http://running.example.com"},
		}},
		{"wide", "-o wide", []string{"NAME", "READY", "REASON", "SPEC", "URL", "AGE", "MESSAGE", "IMAGE"}, map[string][]string{
			"refused": {"False", "ConfigInvalid", "api not made, crawler not made: spec.config config.yaml is refused by Monocle"},
			"running": {"True", "AllComponentsReady", "ConfigInvalid", "every component is ready", "quay.io/change-metrics/monocle:1.11.2"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := shell(t, kubeconfig, "kubectl get mon -n "+ns+" "+tc.args)
			t.Logf("kubectl get mon %s:\n%s", tc.args, out)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 3 {
				t.Fatalf("kubectl get mon %s printed:\n%s", tc.args, out)
			}
			if got := strings.Fields(lines[0]); !slices.Equal(got, tc.header) {
				t.Errorf("columns %q, want %q", got, tc.header)
			}
			for _, line := range lines[1:] {
				name := strings.Fields(line)[0]
				want, ok := tc.rows[name]
				if !ok {
					t.Fatalf("a row for %s", name)
				}
				// The columns in order: each wanted value after the last.
				rest := strings.TrimPrefix(line, name)
				for _, w := range want {
					i := strings.Index(rest, w)
					if i < 0 {
						t.Errorf("%s's row does not show %q after the columns before it:\n%s", name, w, line)
						break
					}
					rest = rest[i+len(w):]
				}
			}
		})
	}
}
