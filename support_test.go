package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The support policy (docs/support.md) says which versions a release is
// tested on; the chart's kubeVersion says which clusters Helm installs it on;
// the build scripts say which versions the tests really run. They must say
// the same: a kubeVersion wider than what the tests run, or a table that
// names a version no test builds, is a promise nobody checked.
func TestSupportPolicy(t *testing.T) {
	policy := readFile(t, "docs/support.md")
	row := func(component string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^\| ` + component + ` \| ([^|]+) \|`).FindStringSubmatch(policy)
		if m == nil {
			t.Fatalf("docs/support.md: no row for %s in the table of versions tested", component)
		}
		return strings.TrimSpace(m[1])
	}
	assets := readFile(t, "tools/assets.sh")
	pinned := func(variable string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + variable + `=(v[0-9.]+)`).FindStringSubmatch(assets)
		if m == nil {
			t.Fatalf("tools/assets.sh sets no %s", variable)
		}
		return m[1]
	}

	// Kubernetes: the one kube-apiserver the e2e suite runs (tools/assets.sh
	// builds it from tools/kube's module), its minor in the table, and the
	// chart's kubeVersion starting there.
	k8s := pinned("K8S_VERSION")
	if kube := readFile(t, "tools/kube/go.mod"); !regexp.MustCompile(`(?m)^\tk8s\.io/kubernetes ` + regexp.QuoteMeta(k8s) + `$`).MatchString(kube) {
		t.Errorf("tools/kube/go.mod does not require k8s.io/kubernetes %s, the version tools/assets.sh names", k8s)
	}
	minor := regexp.MustCompile(`^v(\d+\.\d+)\.\d+$`).FindStringSubmatch(k8s)
	if minor == nil {
		t.Fatalf("K8S_VERSION %q is not vX.Y.Z", k8s)
	}
	if got, want := row("Kubernetes"), fmt.Sprintf("%s (%s)", minor[1], k8s); got != want {
		t.Errorf("docs/support.md tests Kubernetes %q; the e2e suite runs %q", got, want)
	}
	var chart struct {
		Version     string `json:"version"`
		KubeVersion string `json:"kubeVersion"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "chart/Chart.yaml")), &chart); err != nil {
		t.Fatal(err)
	}
	if want := ">=" + minor[1] + ".0-0"; chart.KubeVersion != want {
		t.Errorf("chart/Chart.yaml: kubeVersion %q; the oldest Kubernetes tested is %s: want %q", chart.KubeVersion, k8s, want)
	}
	if want := "`kubeVersion: \"" + chart.KubeVersion + "\"`"; !strings.Contains(policy, want) {
		t.Errorf("docs/support.md does not quote the chart's %s", want)
	}

	// Metacontroller: the tag whose chart `make e2e` installs (through
	// tools/metacontroller-chart.sh), the CRDs the
	// e2e suite installs.
	mc := row("Metacontroller")
	if !strings.Contains(readFile(t, "tools/metacontroller-chart.sh"), "\nVERSION="+mc+"\n") {
		t.Errorf("docs/support.md tests Metacontroller %q; tools/metacontroller-chart.sh, which make e2e runs, reads another tag's chart", mc)
	}
	if crds := readFile(t, "e2e/testdata/metacontroller-crds-v1.yaml"); !strings.HasPrefix(crds, "# Metacontroller "+mc+"'s CRDs") {
		t.Errorf("docs/support.md tests Metacontroller %q; e2e/testdata/metacontroller-crds-v1.yaml holds another version's CRDs", mc)
	}

	// Helm: the one tools/assets.sh builds.
	helm := pinned("HELM_VERSION")
	if got := row("Helm"); got != helm {
		t.Errorf("docs/support.md tests Helm %q; tools/assets.sh builds %q", got, helm)
	}
	if kube := readFile(t, "tools/kube/go.mod"); !regexp.MustCompile(`(?m)^\thelm\.sh/helm/v3 ` + regexp.QuoteMeta(helm) + `( // indirect)?$`).MatchString(kube) {
		t.Errorf("tools/kube/go.mod does not require helm.sh/helm/v3 %s, the version tools/assets.sh names", helm)
	}

	// krew: the one tools/krew.sh builds (from tools/krew's module), whose
	// install of the kubectl plugin e2e/krew_test.go runs.
	krew := regexp.MustCompile(`(?m)^KREW_VERSION=(v[0-9.]+)`).FindStringSubmatch(readFile(t, "tools/krew.sh"))
	if krew == nil {
		t.Fatal("tools/krew.sh sets no KREW_VERSION")
	}
	if got := row("krew"); got != krew[1] {
		t.Errorf("docs/support.md tests krew %q; tools/krew.sh builds %q", got, krew[1])
	}
	if mod := readFile(t, "tools/krew/go.mod"); !regexp.MustCompile(`(?m)^\tsigs\.k8s\.io/krew ` + regexp.QuoteMeta(krew[1]) + `( // indirect)?$`).MatchString(mod) {
		t.Errorf("tools/krew/go.mod does not require sigs.k8s.io/krew %s, the version tools/krew.sh names", krew[1])
	}

}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
