package e2e

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	rbacv1 "k8s.io/api/rbac/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestUpgradeMetacontrollerValuesFirst runs docs/upgrade.md's step 2 as
// printed, from a loopback registry holding this chart and Metacontroller's
// own (METACONTROLLER_CHART), on a Metacontroller installed with the
// dedicated values of a release before NetworkPolicy and
// PodDisruptionBudget children: its ClusterRole then lists both. The
// step's last line, rollout status, waits for a pod, and no kubelet runs
// one here: it is left out.
func TestUpgradeMetacontrollerValuesFirst(t *testing.T) {
	src := os.Getenv("METACONTROLLER_CHART")
	if src == "" {
		t.Skip("METACONTROLLER_CHART is not set (tools/metacontroller-chart.sh): docs/upgrade.md's Metacontroller step is not run")
	}
	lines := upgradeStep(t, "2. Metacontroller's values, before the chart")
	if len(lines) != 4 || !strings.HasPrefix(lines[3], "kubectl -n metacontroller rollout status ") {
		t.Fatalf("docs/upgrade.md's step 2: %q", lines)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	r := &printedRun{host: strings.TrimPrefix(srv.URL, "http://"), version: valStr(chartMetadata(t), "version"), dir: t.TempDir(),
		kubeconfig: adminKubeconfig(t, "upgrader")}
	r.ref = "oci://" + r.host + "/e2e/charts/monocle-hook"
	dist := t.TempDir()
	for _, c := range []struct{ dir, tgz, to string }{
		{chartDir, "monocle-hook-" + r.version + ".tgz", "oci://" + r.host + "/e2e/charts"},
		{src, "metacontroller-helm-4.17.2.tgz", "oci://" + r.host + "/metacontroller"},
	} {
		if _, err := runHelm(t, "package", c.dir, "-d", dist); err != nil {
			t.Fatal(err)
		}
		if _, err := runHelm(t, "push", filepath.Join(dist, c.tgz), c.to, "--plain-http"); err != nil {
			t.Fatal(err)
		}
	}

	// The dedicated values as a release without those kinds had them.
	b, err := os.ReadFile("../chart/files/metacontroller-values-dedicated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const pdb = "    - apiGroups: [policy]\n      resources: [poddisruptionbudgets]\n      verbs: [get, list, watch, create, update, patch, delete]\n"
	old := strings.Replace(strings.Replace(string(b), "resources: [ingresses, networkpolicies]", "resources: [ingresses]", 1), pdb, "", 1)
	if strings.Contains(old, "networkpolicies") || strings.Contains(old, "poddisruptionbudgets") {
		t.Fatal("the dedicated values' rules are not as this test reads them")
	}
	oldValues := filepath.Join(t.TempDir(), "old-dedicated.yaml")
	if err := os.WriteFile(oldValues, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	values, err := filepath.Abs("../chart/files/metacontroller-values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns := "e2e-metacontroller-" + utilrand.String(5)
	uninstallAtCleanup(t, "metacontroller", ns, r.kubeconfig)
	r.mustSh(t, r.dir, r.local("helm install metacontroller oci://ghcr.io/metacontroller/metacontroller-helm --version 4.17.2 -n "+ns+
		" --create-namespace -f "+values+" -f "+oldValues))
	kinds := func() []string {
		t.Helper()
		var role rbacv1.ClusterRole
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: "metacontroller-metacontroller-helm"}, &role); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rule := range role.Rules {
			out = append(out, rule.Resources...)
		}
		return out
	}
	if got := kinds(); slices.Contains(got, "networkpolicies") || slices.Contains(got, "poddisruptionbudgets") {
		t.Fatalf("the old role: %v", got)
	}

	script := strings.Join(lines[:3], "\n")
	script = regexp.MustCompile(`(?m)^V=[0-9.]+`).ReplaceAllString(script, "V="+r.version)
	script = strings.ReplaceAll(script, "-n metacontroller ", "-n "+ns+" ")
	t.Logf("docs/upgrade.md's step 2, here:\n%s", r.local(script))
	r.mustSh(t, r.dir, r.local(script))
	if got := kinds(); !slices.Contains(got, "networkpolicies") || !slices.Contains(got, "poddisruptionbudgets") {
		t.Errorf("after docs/upgrade.md's step 2, Metacontroller's role: %v; want NetworkPolicies and PodDisruptionBudgets", got)
	}
}

// upgradeStep is the sh block of docs/upgrade.md's section heading, its
// comments left out and its continued lines joined.
func upgradeStep(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/upgrade.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("docs/upgrade.md has no sh block under %q", heading)
	}
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}
