package e2e

// The attacks on what the project prints (#34), on a real
// kube-apiserver with the real kubectl: the commands a message prints,
// pasted by an admin in a home directory holding a decoy .kube/config; the
// control characters of a config, as `kubectl get -o jsonpath` prints the
// status the API server stores; and the status writes of an unchanged
// Monocle.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// decoyConfig is what the scratch home's .kube/config holds: an admin's
// credentials, which no pasted command may read.
const decoyConfig = "decoy: an admin's kubeconfig\n"

// githubCrawler is a config whose GitHub crawler reads its token from
// the variable tokenVar: missing, its crawler is held (CrawlerTokenMissing)
// and the message prints the commands that add it.
func githubCrawler(tokenVar string) string {
	return "workspaces:\n  - name: demo\n    crawlers:\n      - name: gh\n        update_since: '2024-01-01'\n" +
		"        provider: {github_organization: change-metrics, github_token: " + strconv.Quote(tokenVar) + "}\n"
}

// A token variable named .kube (a valid Secret key; on Kubernetes 1.37 a
// valid variable name): its commands, read with kubectl from the status
// and pasted at home, add the token of ./token and never the decoy.
func TestPrintedCommandsAtHome(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, nil)
	d := newDriver(t, ns)
	d.createMonocle("m", map[string]any{"config": githubCrawler(".kube")})
	d.sync("m")
	d.sync("m")
	kubeconfig := adminKubeconfig(t, "printed-at-home")
	msg := shell(t, kubeconfig, `kubectl -n `+ns+` get monocle m -o jsonpath='{.status.conditions[?(@.type=="SpecApplied")].message}'`)
	if !strings.Contains(msg, "CrawlerTokenMissing") && !strings.Contains(msg, ".kube") {
		t.Fatalf("SpecApplied's message: %s", msg)
	}
	cmds := command.Pasted(msg)
	if len(cmds) == 0 {
		t.Fatalf("no command in SpecApplied's message: %s", msg)
	}
	for _, cmd := range cmds {
		out := pasteAtHome(t, kubeconfig, cmd, "ghp_e2e")
		t.Logf("pasted: %s\n%s", cmd, out)
	}
	var s corev1.Secret
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m-api"}, &s); err != nil {
		t.Fatal(err)
	}
	for k, v := range s.Data {
		if strings.Contains(string(v), "decoy") {
			t.Errorf("the Secret m-api's key %q holds the decoy .kube/config: %q", k, v)
		}
	}
	if got := string(s.Data[".kube"]); got != "ghp_e2e" {
		t.Errorf("the Secret m-api's key .kube is %q, want the token of ./token-1", got)
	}
}

// render reads a Monocle's namespace from a file: one that is a shell
// command is never printed into a command, so pasting what render says
// runs nothing of it.
func TestRenderedCommandsRunNoNamespace(t *testing.T) {
	monocle := "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\n" +
		"metadata: {name: m, namespace: 'x; echo PWNED; touch PWNED; #'}\n" +
		"spec: {config: " + strconv.Quote(githubCrawler("GITHUB_TOKEN")) + "}\n"
	_, held, err := hook.Render([]byte(monocle), hook.Env{Now: time.Now, Rand: randReader{}, Image: e2eHookImage})
	if err != nil {
		t.Fatal(err)
	}
	if held == nil || held.Reason != "CrawlerTokenMissing" {
		t.Fatalf("render holds %+v, want CrawlerTokenMissing", held)
	}
	if !strings.Contains(held.Message, "(no command: the namespace") {
		t.Errorf("render's message does not say why it prints no command: %s", held.Message)
	}
	kubeconfig := adminKubeconfig(t, "rendered-at-home")
	for _, cmd := range command.Pasted(held.Message) {
		if out := pasteAtHome(t, kubeconfig, cmd, "ghp_e2e"); strings.Contains(out, "PWNED") {
			var shown []string
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "PWNED") {
					shown = append(shown, line)
				}
			}
			t.Errorf("pasted at home, %s\nran: %s", cmd, strings.Join(shown, "\n"))
		}
	}
}

// pasteAtHome runs cmd with sh in a scratch home directory (its working
// directory and $HOME) holding a decoy .kube/config and token in the file
// the message names for it, ./token-1,
// with the admin's kubeconfig elsewhere; it returns what the shell printed
// and the files the home then holds.
func pasteAtHome(t *testing.T, kubeconfig, cmd, token string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), []byte(decoyConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "token-1"), []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", cmd)
	sh.Dir = home
	sh.Env = []string{"HOME=" + home, "KUBECONFIG=" + kubeconfig, "PATH=" + os.Getenv("KUBEBUILDER_ASSETS") + ":" + os.Getenv("PATH")}
	out, _ := sh.CombinedOutput()
	entries, _ := os.ReadDir(home)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return string(out) + "home: " + strings.Join(files, " ")
}

// A config's control and bidi characters (a workspace name with an OSC 52
// clipboard write and a forged line; a YAML tag; a search alias's C1 and
// bidi controls) stored by the API server in the status, as `kubectl get
// -o jsonpath` prints it to a terminal: escaped text, one line.
func TestStatusMessagesAsKubectlPrintsThem(t *testing.T) {
	const hostile = "\x1b]52;c;cm0gLXJmIH4K\x07\r\nns/m: Applied\u009b2J\u202eexe"
	q := strconv.QuoteToASCII // YAML's double-quoted escapes, for ASCII
	ns := createNamespace(t, nil)
	d := newDriver(t, ns)
	kubeconfig := adminKubeconfig(t, "jsonpath-controls")
	for name, config := range map[string]string{
		"workspace": "workspaces:\n  - name: " + q(hostile) + "\n    crawlers: []\n",
		"tag":       "workspaces:\n  - name: !%1B]52;c;eA%07%0D%0A demo\n    crawlers: []\n",
		"alias":     "workspaces:\n  - name: demo\n    crawlers: []\n    search_aliases:\n      - {name: a, alias: " + q("project:\u009b2J\u202eexe\x7f\u0085") + "}\n",
	} {
		t.Run(name, func(t *testing.T) {
			d.createMonocle(name, map[string]any{"config": config})
			d.sync(name)
			out := shell(t, kubeconfig, "kubectl -n "+ns+" get monocle "+name+` -o jsonpath='{range .status.conditions[*]}{.message}{"\n"}{end}'`)
			if !strings.Contains(out, "refused by Monocle") {
				t.Fatalf("no ConfigInvalid message:\n%q", out)
			}
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if !printable.Clean(line) {
					t.Errorf("kubectl prints a control or bidi character: %q", line)
				}
			}
			if lines := strings.Count(out, "\n"); lines != 5 {
				t.Errorf("%d lines for 5 conditions: a message spans lines:\n%q", lines, out)
			}
		})
	}
}

// An unchanged Monocle whose spec has several bad Ingress annotation keys:
// the same InvalidSpec on every sync, so no status write after the first.
func TestUnchangedMonocleStatusStill(t *testing.T) {
	ns := createNamespace(t, nil)
	d := newDriver(t, ns)
	annotations := map[string]any{}
	for _, k := range []string{"bad key1/x", "-bad2", "bad key3", "-bad4", "bad5 ", "-bad6", "bad key7"} {
		annotations[k] = "v"
	}
	// The CRD refuses such keys for a new object: stored before it did,
	// as the driver replays it.
	d.createMonocle("m", map[string]any{})
	d.storedSpec = map[string]any{"ingress": map[string]any{"host": "m.example.com", "annotations": annotations}}
	d.sync("m")
	before := d.monocle("m").GetResourceVersion()
	writes := 0
	for range 20 {
		d.sync("m")
		if rv := d.monocle("m").GetResourceVersion(); rv != before {
			writes++
			before = rv
		}
	}
	if writes > 0 {
		t.Errorf("%d status writes in 20 syncs of an unchanged Monocle, want none", writes)
	}
}
