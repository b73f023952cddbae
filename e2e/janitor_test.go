package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hookCLI builds the monocle-hook binary, for the commands docs/maintenance.md
// prints.
func hookCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "monocle-hook")
	if out, err := exec.Command("go", "build", "-C", "..", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// janitor-job, as docs/maintenance.md runs it: the Monocle's objects piped from
// kubectl, the Job applied as printed; a Pod of each command's Job passes a
// restricted namespace's admission, with no warnings.
func TestJanitorJobAsDocumented(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	config := "workspaces:\n  - name: demo\n    crawlers:\n      - name: gerrit\n        update_since: '2024-01-01'\n        provider: {gerrit_url: 'https://review.opendev.org', gerrit_repositories: [nova]}\n"
	d.createMonocle("j", map[string]any{"config": config})
	d.converge("j")
	bin := hookCLI(t)
	kubeconfig := adminKubeconfig(t, "e2e-janitor")
	dir := t.TempDir()
	objects := "kubectl -n " + ns + " get deployments,configmaps -l app.kubernetes.io/instance=j -o yaml"

	// Refused when printed: nothing the janitor would ignore.
	cmd := exec.Command("sh", "-c", objects+" | "+bin+" janitor-job set-crawler-commit-date --monocle j -f - --workspace demo --crawler zuul --commit-date 2023-06-01")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), `workspace "demo" has no crawler "zuul"`) {
		t.Fatalf("an unknown crawler: %v\n%s", err, out)
	}

	c, warnings := chartWarningClient(t)
	for _, args := range []string{
		"set-crawler-commit-date --workspace demo --crawler gerrit --commit-date 2023-06-01",
		"wipe-crawler-data --workspace demo --crawler gerrit",
		"update-idents",
	} {
		file := filepath.Join(dir, strings.Fields(args)[0]+".yaml")
		out := shell(t, kubeconfig, objects+" | "+bin+" janitor-job "+args+" --monocle j -f - > "+file+" && kubectl apply -f "+file)
		if strings.Contains(out, "Warning") || !strings.Contains(out, "created") {
			t.Errorf("%s: kubectl apply printed %s", args, out)
		}
		manifest, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		for _, line := range strings.Split(string(manifest), "\n") {
			if n, ok := strings.CutPrefix(line, "  name: "); ok {
				name = n
			}
		}
		var job batchv1.Job
		if err := k8sClient.Get(ctx, clientKey(ns, name), &job); err != nil {
			t.Fatalf("%s: the applied Job %q: %v", args, name, err)
		}
		if got := strings.Join(job.Spec.Template.Spec.Containers[0].Command, " "); !strings.HasPrefix(got, "monocle janitor "+strings.Fields(args)[0]+" --elastic $(MONOCLE_ELASTIC_URL) --config /etc/monocle/config.yaml") {
			t.Errorf("command %s", got)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: job.Spec.Template.Labels}, Spec: job.Spec.Template.Spec}
		if err := c.Create(ctx, pod, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
			t.Errorf("%s: a Pod of the Job is not admitted in a restricted namespace: %v", args, err)
		}
		if w := warnings.take(); len(w) > 0 {
			t.Errorf("%s: warnings %q", args, w)
		}
		// Applied again: unchanged, nothing runs again.
		if out := shell(t, kubeconfig, "kubectl apply -f "+file); !strings.Contains(out, "unchanged") {
			t.Errorf("applied again: %s", out)
		}
	}
}
