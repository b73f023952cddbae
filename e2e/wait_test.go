package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/hook"
)

// docCommands are the command lines of the sh blocks of docs/status.md's
// section heading, NS and NAME replaced by ns and name, as a user would.
func docCommands(t *testing.T, heading, ns, name string) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/status.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/status.md has no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var lines []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
			lines = append(lines, strings.NewReplacer("NS", ns, "NAME", name).Replace(line))
		}
	}
	return lines
}

// TestWaitingForAChange runs docs/status.md's "Waiting for a change" as
// printed, with the real kubectl and kubectl monocle on PATH: on an edit,
// neither the kubectl waits nor status --wait pass while the status is of
// the spec before it, nor while the API rolls out (kubectl get's IMAGE
// then the image still running); both pass once it is ready. On a refused edit, the kubectl wait for SpecApplied times out
// and status --wait exits 1 at once. Readiness is played through the
// status subresource.
func TestWaitingForAChange(t *testing.T) {
	ns := restrictedNamespace(t)
	kubeconfig := adminKubeconfig(t, "waiting")
	bin := buildPlugin(t)
	path := filepath.Dir(bin) + ":" + os.Getenv("KUBEBUILDER_ASSETS") + ":" + os.Getenv("PATH")
	sh := func(line string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+path)
		return cmd
	}
	lines := docCommands(t, "Waiting for a change", ns, "m")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "kubectl -n "+ns+" wait monocle/m --for=condition=SpecApplied") ||
		!strings.Contains(lines[1], "--for=condition=Ready") || !strings.HasPrefix(lines[2], "kubectl monocle status m -n "+ns+" --wait") {
		t.Fatalf("the section's commands: %q", lines)
	}
	kubectlWaits, pluginWait := lines[0]+" && "+lines[1], lines[2]

	d := newDriver(t, ns)
	spec := map[string]any{"publicURL": "http://m.example.com", "crawler": map[string]any{"enabled": false}}
	d.createMonocle("m", spec)
	d.converge("m")
	d.markReady("StatefulSet.apps/v1", "m-elastic")
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	for _, line := range []string{kubectlWaits, pluginWait} {
		if out, err := sh(line).CombinedOutput(); err != nil {
			t.Fatalf("applied and ready: %s: %v\n%s", line, err, out)
		}
	}

	// An edit that rolls the API, not yet synced.
	spec["image"] = "quay.io/change-metrics/monocle:1.11.3"
	d.setSpec("m", spec)
	waits := []*background{start(t, sh(kubectlWaits)), start(t, sh(pluginWait))}
	stillWaiting := func(when string) {
		t.Helper()
		time.Sleep(3 * time.Second)
		for i, b := range waits {
			select {
			case <-b.done:
				t.Fatalf("%s: %q ended, exit %d:\n%s", when, []string{kubectlWaits, pluginWait}[i], b.code, b.out.String())
			default:
			}
		}
	}
	stillWaiting("the edit not synced")
	d.converge("m")
	if r := conditionOf(d.monocle("m"), "Ready"); r["reason"] != "ComponentsNotReady" {
		t.Fatalf("the API rolling out: Ready %v", r)
	}
	stillWaiting("the API rolling out")
	// kubectl get's IMAGE is the last complete rollout's meanwhile.
	image := func() string {
		out, err := sh("kubectl get monocle m -n " + ns + " -o wide --no-headers").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get -o wide: %v\n%s", err, out)
		}
		fields := strings.Fields(string(out))
		return fields[len(fields)-1]
	}
	if got := image(); got != hook.DefaultImage {
		t.Errorf("the API rolling out: IMAGE %q, want the running %s", got, hook.DefaultImage)
	}
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	for i, b := range waits {
		select {
		case <-b.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("ready: %q has not ended after 30 s:\n%s", []string{kubectlWaits, pluginWait}[i], b.out.String())
		}
		if b.code != 0 {
			t.Errorf("ready: %q exit %d:\n%s", []string{kubectlWaits, pluginWait}[i], b.code, b.out.String())
		}
	}

	if got := image(); got != "quay.io/change-metrics/monocle:1.11.3" {
		t.Errorf("rolled out: IMAGE %q", got)
	}

	// A refused edit: the first wait times out (its timeout shortened),
	// status --wait ends at once.
	spec["config"] = "workspaces:\n  - name: my team\n    crawlers: []\n"
	d.setSpec("m", spec)
	d.converge("m")
	out, err := sh(strings.Replace(lines[0], "--timeout=5m", "--timeout=3s", 1)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "timed out") {
		t.Errorf("refused: %s: %v\n%s", lines[0], err, out)
	}
	began := time.Now()
	out, err = sh(pluginWait).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || time.Since(began) > 20*time.Second || !strings.Contains(string(out), "SpecApplied is False, ConfigInvalid") {
		t.Errorf("refused: %s: %v after %s\n%s", pluginWait, err, time.Since(began), out)
	}
}

// TestStalledSyncIsSeen: a Monocle edited while its controller is stalled
// (the driver, Metacontroller's part here, does not sync it) is reported
// by kubectl monocle check as NotSynced, exit 1, with the likely causes,
// and by status as NOT SYNCED; synced again, check passes.
func TestStalledSyncIsSeen(t *testing.T) {
	ns := restrictedNamespace(t)
	kubeconfig := adminKubeconfig(t, "stalled")
	bin := buildPlugin(t)
	d := newDriver(t, ns)
	spec := map[string]any{"publicURL": "http://m.example.com", "crawler": map[string]any{"enabled": false}}
	d.createMonocle("m", spec)
	d.converge("m")
	d.markReady("StatefulSet.apps/v1", "m-elastic")
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	if code, stdout, stderr := runPlugin(t, bin, kubeconfig, "check", "-n", ns); code != 0 {
		t.Fatalf("synced: check exit %d\n%s%s", code, stdout, stderr)
	}

	spec["api"] = map[string]any{"replicas": int64(2)}
	d.setSpec("m", spec)
	code, stdout, stderr := runPlugin(t, bin, kubeconfig, "check", "-n", ns)
	t.Logf("kubectl monocle check -n %s: exit %d\n%s%s", ns, code, stdout, stderr)
	if code != 1 || !strings.Contains(stdout, ns+"/m: NotSynced: its status is of generation 1, its spec of 2: its last change is not applied. Likely causes: Metacontroller does not run") ||
		!strings.Contains(stdout, "Monocles checked: 1; applied in full: 0; not: 1") {
		t.Errorf("stalled: check exit %d", code)
	}
	code, stdout, stderr = runPlugin(t, bin, kubeconfig, "status", "m", "-n", ns)
	if code != 0 || !strings.Contains(stdout, "NOT SYNCED: its status is of generation 1, its spec of 2") {
		t.Errorf("stalled: status exit %d\n%s%s", code, stdout, stderr)
	}

	d.converge("m")
	if code, stdout, stderr := runPlugin(t, bin, kubeconfig, "check", "-n", ns); code != 0 {
		t.Errorf("synced again: check exit %d\n%s%s", code, stdout, stderr)
	}
}
