package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// buildPlugin builds kubectl-monocle (its own module) into a temporary
// folder.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-monocle")
	out, err := exec.Command("go", "build", "-C", "../kubectl-monocle", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -C ../kubectl-monocle: %v\n%s", err, out)
	}
	return bin
}

// runPlugin runs the plugin with args: its exit code, stdout and stderr.
func runPlugin(t *testing.T, bin, kubeconfig string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("running kubectl-monocle %v: %v", args, err)
	return 0, "", ""
}

// TestPlugin: `kubectl monocle status` as a user with only the namespace's
// view role, and `kubectl monocle check` as one with only its edit role,
// on the real API server, on a new Monocle and on a converged one; check
// names a referenced Secret that is missing (exit 1) and passes once it is
// there (exit 0).
//
// The built-in roles are filled by kube-controller-manager's ClusterRole
// aggregation, run here. They cover Monocles only with the chart's
// aggregated ClusterRoles, which this test does not install: it grants
// get and list on monocles with a Role of its own, bound to both users.
func TestPlugin(t *testing.T) {
	ctx := context.Background()
	bin := buildPlugin(t)
	startControllerManager(t, "clusterrole-aggregation")
	ns := restrictedNamespace(t)

	if err := k8sClient.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "monocle-reader", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"monocle.monocle.change-metrics.io"}, Resources: []string{"monocles"}, Verbs: []string{"get", "list"}}},
	}); err != nil {
		t.Fatal(err)
	}
	kubeconfigs := map[string]string{}
	for _, role := range []string{"view", "edit"} {
		user := ns + "-" + role
		subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
		for _, rb := range []*rbacv1.RoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}},
			{ObjectMeta: metav1.ObjectMeta{Name: role + "-monocles", Namespace: ns}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "monocle-reader"}},
		} {
			if err := k8sClient.Create(ctx, rb); err != nil {
				t.Fatal(err)
			}
		}
		kubeconfigs[role] = userKubeconfig(t, user)
	}
	viewer, editor := kubeconfigs["view"], kubeconfigs["edit"]
	// The aggregation controller fills view and edit within seconds.
	for _, c := range []struct{ kubeconfig, line string }{
		{viewer, "kubectl auth can-i list statefulsets.apps -n " + ns},
		{editor, "kubectl auth can-i get secrets -n " + ns},
	} {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			if answer, _ := canI(t, c.kubeconfig, c.line); answer == "yes" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 60 s: %s is still not yes", c.line)
			}
		}
	}
	// What the roles give, as the plugin's users have them.
	for _, c := range []struct{ kubeconfig, line, want string }{
		{viewer, "kubectl auth can-i list secrets -n " + ns, "no"},
		{viewer, "kubectl auth can-i create services --subresource=proxy -n " + ns, "no"},
		{editor, "kubectl auth can-i create services --subresource=proxy -n " + ns, "yes"},
		{editor, "kubectl auth can-i list monocles.monocle.monocle.change-metrics.io -A", "no"},
	} {
		if got, out := canI(t, c.kubeconfig, c.line); got != c.want {
			t.Fatalf("%s: %s, want %s\n%s", c.line, got, c.want, out)
		}
	}

	d := newDriver(t, ns)
	config := "workspaces:\n  - name: ws\n    crawlers:\n      - name: github\n        update_since: \"2024-01-01\"\n" +
		"        provider: {github_organization: org, github_token: GITHUB_TOKEN}\n"
	d.createMonocle("m", map[string]any{"secretRef": map[string]any{"name": "tokens"}, "config": config,
		"elasticsearch": map[string]any{"snapshots": map[string]any{"schedule": "0 3 * * *", "keep": int64(7)}}})

	status := func(kubeconfig string, args ...string) string {
		t.Helper()
		code, stdout, stderr := runPlugin(t, bin, kubeconfig, append([]string{"status", "m", "-n", ns}, args...)...)
		if code != 0 || stderr != "" {
			t.Fatalf("status %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		return stdout
	}
	check := func(want int, wants ...string) {
		t.Helper()
		code, stdout, stderr := runPlugin(t, bin, editor, "check", "-n", ns, "--hook-image", e2eHookImage)
		t.Logf("kubectl monocle check -n %s: exit %d\n%s%s", ns, code, stdout, stderr)
		if code != want {
			t.Fatalf("check: exit %d, want %d", code, want)
		}
		for _, w := range wants {
			if !strings.Contains(stdout, w) {
				t.Errorf("check does not say %q", w)
			}
		}
	}
	contains := func(what, out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s does not show %q:\n%s", what, w, out)
			}
		}
	}

	// New: no status yet, no child.
	out := status(viewer)
	t.Logf("kubectl monocle status m (new, as a viewer):\n%s", out)
	contains("status of a new Monocle", out, "Monocle "+ns+"/m (generation 1, observed 0)", "(none yet: Metacontroller has not synced it)",
		"(not shown: Secrets: you may not list secrets in "+ns+")", "crawlers: no API Deployment m-api to ask")
	check(1, "/m: ReferenceNotFound", `"tokens"`, "Monocles checked: 1; applied in full: 0; not: 1")

	// Converged without the Secret: held, and said so.
	d.converge("m")
	out = status(viewer)
	contains("status of a held Monocle", out, "SpecApplied", "ReferenceNotFound", "StatefulSet/m-elastic", "CronJob/m-snapshots")
	check(1, `"tokens"`)

	// The Secret there, the Monocle converged and its workloads ready.
	if err := k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens", Namespace: ns},
		Data: map[string][]byte{"GITHUB_TOKEN": []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	check(0, "Monocles checked: 1; applied in full: 1; not: 0; rolled: 0")
	d.converge("m")
	d.markReady("StatefulSet.apps/v1", "m-elastic")
	d.markReady("Deployment.apps/v1", "m-api")
	d.markReady("Deployment.apps/v1", "m-crawler")
	d.converge("m")
	check(0, "Monocles checked: 1; applied in full: 1; not: 0; rolled: 0")

	// A namespace editor's hostPID in the CronJob's template: check shows
	// the drift (every other child, as the API server stores what the hook
	// answered, shows none), and the command it prints puts it back.
	cj := &batchv1.CronJob{}
	if err := k8sClient.Get(ctx, clientKey(ns, "m-snapshots"), cj); err != nil {
		t.Fatal(err)
	}
	cj.Spec.JobTemplate.Spec.Template.Spec.HostPID = true
	if err := k8sClient.Update(ctx, cj); err != nil {
		t.Fatal(err)
	}
	putBack := "kubectl -n " + ns + " delete cronjob m-snapshots"
	check(1, ns+"/m: ChildDrift: the CronJob m-snapshots is not what the hook answers: spec.jobTemplate.spec.template.spec.hostPID differ", putBack)
	run := exec.Command("sh", "-c", putBack)
	run.Env = append(os.Environ(), "KUBECONFIG="+editor, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	if b, err := run.CombinedOutput(); err != nil || !strings.Contains(string(b), "deleted") {
		t.Fatalf("%s: %v\n%s", putBack, err, b)
	}
	d.converge("m")
	check(0, "Monocles checked: 1; applied in full: 1; not: 0; rolled: 0")

	out = status(viewer)
	t.Logf("kubectl monocle status m (converged, as a viewer):\n%s", out)
	contains("status of a converged Monocle", out,
		"every spec field is in effect", "Elasticsearch, the API and the crawler are ready",
		"Deployment/m-api", "Deployment/m-crawler", "StatefulSet/m-elastic", "Service/m-api", "CronJob/m-snapshots",
		"Images running: Monocle quay.io/change-metrics/monocle:1.11.2", "next:",
		"(not shown: Secrets: you may not list secrets in "+ns+")",
		"crawlers: not shown: you may not use services/proxy on m-api in "+ns+" (403 Forbidden")
	var st struct {
		Name     string `json:"name"`
		Children []struct{ Kind, Name, Ready string }
	}
	if err := json.Unmarshal([]byte(status(viewer, "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	ready := map[string]string{}
	for _, c := range st.Children {
		ready[c.Kind+"/"+c.Name] = c.Ready
	}
	for _, k := range []string{"StatefulSet/m-elastic", "Deployment/m-api", "Deployment/m-crawler"} {
		if ready[k] != "yes" {
			t.Errorf("-o json: %s ready %q, want yes (%v)", k, ready[k], ready)
		}
	}
	// An editor may use the service proxy: no pod answers behind it here
	// (there is no kubelet), so the crawlers' part says the API did not
	// answer; the proxy path to a running Monocle cannot be exercised here.
	out = status(editor)
	t.Logf("kubectl monocle status m (converged, as an editor):\n%s", out)
	contains("status as an editor", out, "Secret/m-api", "crawlers: Monocle's API, through the API server's service proxy, did not answer")

	// Failures to read the cluster exit 2: a Monocle that is not there,
	// and every namespace for a user of one.
	if code, _, stderr := runPlugin(t, bin, viewer, "status", "absent", "-n", ns); code != 2 || !strings.Contains(stderr, "not found") {
		t.Errorf("status of an absent Monocle: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runPlugin(t, bin, editor, "check", "-A"); code != 2 || !strings.Contains(stderr, "forbidden") {
		t.Errorf("check -A as an editor of one namespace: exit %d\n%s", code, stderr)
	}
	// As docs/plugin.md runs them: kubectl finds the plugin on PATH. check -A
	// reads every namespace, where other tests' Monocles may be held (1).
	admin := adminKubeconfig(t, "plugin-admin")
	for _, c := range []struct {
		line  string
		codes []int
		want  string
	}{
		{"kubectl monocle status m -n " + ns, []int{0}, "Deployment/m-api"},
		{"kubectl monocle check -A", []int{0, 1}, "Monocles checked: "},
	} {
		cmd := exec.Command("sh", "-c", c.line)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+admin, "PATH="+filepath.Dir(bin)+":"+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: exit %d\n%s", c.line, code, out)
		if !slices.Contains(c.codes, code) || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: exit %d, want one of %v, and %q in:\n%s", c.line, code, c.codes, c.want, out)
		}
	}
	// check as a viewer, who may not read Secrets: 2, and why.
	if code, _, stderr := runPlugin(t, bin, viewer, "check", "-n", ns); code != 2 || !strings.Contains(stderr, "the namespace's edit role") {
		t.Errorf("check as a viewer: exit %d\n%s", code, stderr)
	}
}

// TestPluginCheckMemory: check on a namespace of 50 MiB of ConfigMaps no
// Monocle references peaks under 100 MiB (its maximum resident set, as
// the kernel counts it for the process): it reads only what the Monocle
// references. BENCHMARKS.md records the figure.
func TestPluginCheckMemory(t *testing.T) {
	ctx := context.Background()
	bin := buildPlugin(t)
	ns := createNamespace(t, nil)
	const size, total = 900 << 10, 50 << 20
	value := strings.Repeat("x", size)
	n := 0
	for written := 0; written < total; written += size {
		if err := k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%d", n), Namespace: ns},
			Data: map[string]string{"data": value}}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	d := newDriver(t, ns)
	d.createMonocle("m", map[string]any{})
	d.converge("m")
	kubeconfig := adminKubeconfig(t, "plugin-memory")

	// GNU time forks (not vfork) and reads its child's peak at wait4: the
	// test's own process is not in the figure. Go's os/exec starts a child
	// with CLONE_VM, and Linux carries the parent's resident high-water
	// mark into the child's ru_maxrss at its exec (exec_mmap): measured
	// from here, after the tests that read archives into memory, the
	// plugin "peaked" at the test's 120 MiB.
	rss := filepath.Join(t.TempDir(), "maxrss")
	cmd := exec.Command("/usr/bin/time", "-f", "%M", "-o", rss, bin, "--kubeconfig", kubeconfig, "check", "-n", ns)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("/usr/bin/time ... check: %v\n%s", err, out)
	}
	kib, err := os.ReadFile(rss)
	if err != nil {
		t.Fatal(err)
	}
	maxRSS, err := strconv.ParseInt(strings.TrimSpace(string(kib)), 10, 64)
	if err != nil {
		t.Fatalf("/usr/bin/time -f %%M wrote %q: %v", kib, err)
	}
	maxRSS <<= 10
	t.Logf("kubectl monocle check -n %s, beside %d ConfigMaps of %d KiB (%.1f MiB): max RSS %.1f MiB\n%s",
		ns, n, size>>10, float64(n*size)/(1<<20), float64(maxRSS)/(1<<20), out)
	if maxRSS >= 100<<20 {
		t.Errorf("check peaked at %.1f MiB, not under 100 MiB", float64(maxRSS)/(1<<20))
	}
}
