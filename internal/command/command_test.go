package command

import (
	"os/exec"
	"strings"
	"testing"
)

// A quoted word is read back by a POSIX shell as the word itself, whatever
// it holds: nothing expands, splits, runs or reads a file.
func TestQuoteIsOneWord(t *testing.T) {
	for _, w := range []string{
		"plain", "--from-file=GITHUB_TOKEN=./token", "job/monocle-sample-snapshots-29933460",
		"x; echo PWNED; #", "$(echo PWNED)", "`echo PWNED`", "~/.kube/config", "a b\tc\nd",
		"it's", "'", "", "*", "a=b=~", "{a,b}", `\`, "!", "--from-file=.kube",
		`[{"op":"remove","path":"/data/MONOCLE_JWK_GEN_KEY"}]`,
	} {
		out, err := exec.Command("sh", "-c", `printf '%s\0' `+Quote(w)).Output()
		if err != nil {
			t.Fatalf("%q: %v", w, err)
		}
		if got := strings.TrimSuffix(string(out), "\x00"); got != w || strings.Count(string(out), "\x00") != 1 {
			t.Errorf("sh reads %s as %q, want %q", Quote(w), out, w)
		}
	}
}

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"kubectl", "-n", "default", "logs", "job/m-1"}, "kubectl -n default logs job/m-1"},
		{[]string{"kubectl", "patch", "pvc", "d", "-p", `{"a":"1Gi"}`}, `kubectl patch pvc d -p '{"a":"1Gi"}'`},
		{[]string{"kubectl", "-n", "x; echo PWNED; #"}, `kubectl -n 'x; echo PWNED; #'`},
	} {
		if got := Line(tc.words...); got != tc.want {
			t.Errorf("Line(%q) = %s, want %s", tc.words, got, tc.want)
		}
	}
}

func TestKubectlChecksTheNamespace(t *testing.T) {
	for ns, ok := range map[string]bool{"": true, "default": true, "team-a": true, "x; echo PWNED; #": false, "Team": false, "a.b": false, "-n": false} {
		if _, got := Kubectl(ns); got != ok {
			t.Errorf("Kubectl(%q): ok %v, want %v", ns, got, ok)
		}
	}
}

// Strip takes out a form's command only when each value is what it claims.
func TestStrip(t *testing.T) {
	for text, want := range map[string]string{
		"run kubectl -n default logs job/m-1; ok":        "run <command>; ok",
		"run kubectl logs job/m-1":                       "run <command>",
		"run kubectl -n 'x; echo PWNED; #' logs job/m-1": "run kubectl -n 'x; echo PWNED; #' logs job/m-1",
		"run kubectl -n default logs job/m-1$(id)":       "run kubectl -n default logs job/m-1$(id)",
		"kubectl -n d create secret generic s --from-file=.kube=./token-1 --from-file=B=./token-2 --dry-run=client -o json | kubectl -n d patch secret s --type=merge --patch-file=/dev/stdin": "<command>",
		"kubectl -n d create secret generic s --from-file=.kube=./x --dry-run=client -o json | kubectl -n d patch secret s --type=merge --patch-file=/dev/stdin":                               "kubectl -n d create secret generic s --from-file=.kube=./x --dry-run=client -o json | kubectl -n d patch secret s --type=merge --patch-file=/dev/stdin",
		"kubectl -n d create secret generic s --from-file=.kube --dry-run=client -o json | kubectl -n d patch secret s --type=merge --patch-file=/dev/stdin":                                   "kubectl -n d create secret generic s --from-file=.kube --dry-run=client -o json | kubectl -n d patch secret s --type=merge --patch-file=/dev/stdin",
	} {
		if got := Strip(text); got != want {
			t.Errorf("Strip(%q) = %q, want %q", text, got, want)
		}
	}
}

// Every form is one line that runs no second command of its own, and
// reads no file a value names: --from-file only through FROM-FILES.
func TestFormsAreWhole(t *testing.T) {
	for _, f := range Forms {
		if strings.ContainsAny(f.Text, "\n;&`$<>") || strings.Count(f.Text, "|") > 1 {
			t.Errorf("%s: %q runs more than it says", f.By, f.Text)
		}
		for _, w := range strings.Fields(f.Text) {
			if strings.HasPrefix(w, "--from-file=") {
				t.Errorf("%s: %q reads a file named by a value", f.By, w)
			}
		}
		example := strings.NewReplacer("FROM-FILES", "--from-file=.kube=./token-1 --from-file=GITHUB_TOKEN=./token-2",
			"REMOVE-KEYS", `{"op":"remove","path":"/data/.kube"},{"op":"remove","path":"/data/GHCRTS"}`,
			"NAMESPACE", "team-a", "NAME", "monocle-sample-api", "KEY", ".kube", "KIND", "deployment", "SIZE", "20Gi").Replace(f.Text)
		if Strip(example) != "<command>" {
			t.Errorf("%s: Strip(%q) = %q", f.By, example, Strip(example))
		}
	}
}
