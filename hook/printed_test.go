package hook

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// The attacks on what the hook prints: a config's values reach
// SpecApplied's message, which people read in terminals (kubectl describe,
// -o jsonpath, monocle-hook check). Each must arrive as text: no control or
// bidi character, no line the message did not mean.
func TestMessagesCarryNoControls(t *testing.T) {
	// An OSC 52 clipboard write, a forged line, a C1 CSI, a bidi override.
	const hostileC1 = "\u009b2J\u202eexe\x7f\u0085"
	const hostile = "\x1b]52;c;cm0gLXJmIH4K\x07\r\nns/m: Applied\u009b2J\u202eexe"
	for name, config := range map[string]string{
		"a workspace name": "workspaces:\n  - name: " + yamlQuoted(hostile) + "\n    crawlers: []\n",
		// %1B in a tag decodes to ESC.
		"a YAML tag": "workspaces:\n  - name: !%1B]52;c;eA%07%0D%0A demo\n    crawlers: []\n",
		// The search language takes no C0 control, but C1, DEL and bidi
		// controls in its values and fields.
		"a search alias's value": aliasConfig("project:" + hostileC1),
		"a search alias's field": aliasConfig(hostileC1 + ":x"),
		"a search alias's date":  aliasConfig("from:" + hostileC1),
	} {
		t.Run(name, func(t *testing.T) {
			a := decodeAnswer(t, syncJSON(t, steady(t, configSpec(t, config, ""))))
			c := a.Status.Condition(condition.ConditionSpecApplied)
			if c.Reason != "ConfigInvalid" {
				t.Fatalf("SpecApplied %+v, want ConfigInvalid", c)
			}
			if !printable.Clean(c.Message) {
				t.Errorf("SpecApplied's message carries a control or bidi character: %q", c.Message)
			}
			for _, c := range a.Status.Conditions {
				if !printable.Clean(c.Message) {
					t.Errorf("%s's message carries a control or bidi character: %q", c.Type, c.Message)
				}
			}
		})
	}
}

// yamlQuoted is s as a YAML double-quoted scalar: YAML refuses control
// characters in its text, not in its escapes, which are Go's for ASCII.
func yamlQuoted(s string) string { return strconv.QuoteToASCII(s) }

func aliasConfig(alias string) string {
	return "workspaces:\n  - name: demo\n    crawlers: []\n    search_aliases:\n      - {name: a, alias: " + yamlQuoted(alias) + "}\n"
}

// checkPrinted holds every condition message of every answer the tests
// and the fuzz targets get to what the issue asks of a message: no control
// or bidi character, and no command but one of command.Forms with each
// value what it claims to be; and its reason to one of condition.Reasons,
// given with that condition and status.
func checkPrinted(t testing.TB, conds []metav1.Condition) {
	t.Helper()
	for _, c := range conds {
		if !condition.Given(c.Reason, c.Type, string(c.Status)) {
			t.Fatalf("%s=%s has reason %s, which condition.Reasons does not give it", c.Type, c.Status, c.Reason)
		}
		if !printable.Clean(c.Message) {
			t.Fatalf("%s's message carries a control or bidi character: %q", c.Type, c.Message)
		}
		if rest := command.Strip(c.Message); strings.Contains(rest, "kubectl") {
			t.Fatalf("%s's message prints a command that is not one of command.Forms (or a value in it is not what it claims):\n%s", c.Type, rest)
		}
	}
}

// The attacks on the commands the hook prints, run as an admin
// would paste them: in a scratch home directory holding a decoy
// .kube/config, with the tokens the message asks for in ./token-N, and a
// kubectl that records what it was given and what its --from-file read.
// No command may read the decoy or run anything a tenant wrote.
func TestPrintedCommandsRunNoTenantChoice(t *testing.T) {
	tokenVar := func(v string) string {
		return configSpec(t, strings.Replace(githubConfig, "{github_organization", "{github_token: "+yamlQuoted(v)+", github_organization", 1), "")
	}
	for name, tc := range map[string]struct {
		namespace, spec string
		reads           bool // the command reads ./token-1
	}{
		// A valid Secret key, and on Kubernetes 1.37 a valid variable name.
		"a token variable named .kube":  {namespace: "default", spec: tokenVar(".kube"), reads: true},
		"a token variable named ..kube": {namespace: "default", spec: tokenVar("..kube")},
		// render and check read a Monocle's namespace from a file.
		"a namespace that is a shell command": {namespace: "x; echo PWNED >&2; touch PWNED; #", spec: configSpec(t, githubConfig, "")},
	} {
		t.Run(name, func(t *testing.T) {
			req := steady(t, tc.spec)
			req.Parent.Metadata.Namespace = tc.namespace
			// Sync itself, not syncJSON: this test stands on its own.
			resp, err := Sync(req, testEnv())
			if err != nil {
				t.Fatal(err)
			}
			c := answerStatus{resp.Status}.Condition(condition.ConditionSpecApplied)
			if c.Reason != condition.ReasonCrawlerTokenMissing {
				t.Fatalf("SpecApplied %+v, want %s", c, condition.ReasonCrawlerTokenMissing)
			}
			read := false
			for _, cmd := range command.Pasted(c.Message) {
				log := runPasted(t, cmd)
				if strings.Contains(log, "PWNED") || strings.Contains(log, decoy) {
					t.Errorf("pasted at home, %s\nran or read:\n%s", cmd, log)
				}
				read = read || strings.Contains(log, "ghp_test")
			}
			if read != tc.reads {
				t.Errorf("a command read ./token-1: %v, want %v; the message: %s", read, tc.reads, c.Message)
			}
		})
	}
}

// decoy is what the scratch home's .kube/config holds.
const decoy = "decoy-kubeconfig: an admin's credentials"

// runPasted runs cmd with sh in a scratch home (its working directory),
// with a kubectl that logs its arguments and the files its --from-file
// names (a directory's files, as kubectl reads them); it returns the log,
// the shell's output and what the scratch home holds.
func runPasted(t *testing.T, cmd string) string {
	t.Helper()
	home, bin := t.TempDir(), t.TempDir()
	log := filepath.Join(bin, "log")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(home, ".kube"), 0o700))
	must(os.WriteFile(filepath.Join(home, ".kube", "config"), []byte(decoy), 0o600))
	for i := 1; i <= 5; i++ { // the files the message asks for
		must(os.WriteFile(filepath.Join(home, "token-"+strconv.Itoa(i)), []byte("ghp_test"), 0o600))
	}
	must(os.WriteFile(filepath.Join(bin, "kubectl"), []byte(`#!/bin/sh
echo "kubectl $*" >>"$LOG"
for a; do
	case $a in --from-file=*)
		f=${a#--from-file=}; case $f in *=*) f=${f#*=};; esac
		if [ -d "$f" ]; then cat "$f"/* >>"$LOG"; else cat "$f" >>"$LOG"; fi
	esac
done
`), 0o755))
	sh := exec.Command("sh", "-c", cmd)
	sh.Dir = home
	sh.Env = []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH"), "LOG=" + log}
	out, _ := sh.CombinedOutput()
	logged, _ := os.ReadFile(log)
	entries, _ := os.ReadDir(home)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return string(logged) + string(out) + "\nhome: " + strings.Join(files, " ")
}

// The token command is whole in the message however many tokens are
// missing and however long their names: a command cut short is one a
// reader cannot paste. Too long to print whole, it is not printed.
func TestTokenCommandIsWhole(t *testing.T) {
	for name, tc := range map[string]struct {
		variable int // each variable's length
		keys     int // the --from-file of the command
		more     string
	}{
		"long names: fewer keys, the others counted": {variable: 40, keys: 3, more: "(then the same for up to 4 more variables)"},
		"names too long for one command":             {variable: 200, more: "(no command: the names are too long"},
	} {
		t.Run(name, func(t *testing.T) {
			var crawlers strings.Builder
			for i := range 7 {
				fmt.Fprintf(&crawlers, "      - {name: gh%d, update_since: '2024-01-01', provider: {github_organization: x, github_token: TOKEN_%d_%s}}\n",
					i, i, strings.Repeat("X", tc.variable-8))
			}
			secret := strings.Repeat("s", 253)
			req := steady(t, configSpec(t, "workspaces:\n  - name: demo\n    crawlers:\n"+crawlers.String(), `{"secretRef":{"name":"`+secret+`"}}`))
			req.Parent.Metadata.Namespace = strings.Repeat("n", 63)
			req.Related = wire.Related{Secrets: map[string]*corev1.Secret{secret: {ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: req.Parent.Metadata.Namespace}}}}
			c := decodeAnswer(t, syncJSON(t, req)).Status.Condition(condition.ConditionSpecApplied)
			cmds := command.Pasted(c.Message)
			if c.Reason != condition.ReasonCrawlerTokenMissing || !strings.Contains(c.Message, tc.more) || strings.HasSuffix(c.Message, "…") {
				t.Fatalf("SpecApplied %s: %s", c.Reason, c.Message)
			}
			if tc.keys == 0 {
				if len(cmds) != 0 {
					t.Errorf("commands %q, want none", cmds)
				}
				return
			}
			if len(cmds) != 1 || !strings.HasSuffix(cmds[0], "--patch-file=/dev/stdin") || strings.Count(cmds[0], "--from-file=") != tc.keys {
				t.Errorf("commands %q, want one whole, with %d keys", cmds, tc.keys)
			}
		})
	}
}
