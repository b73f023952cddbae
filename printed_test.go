package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// The attacks on what the CLI prints: check's report, render's
// stderr and a command's error, from a file anyone may have written. Each
// line is text (no control or bidi character), and a value makes no line
// of its own: a forged "ns/m: Applied" line would pass a reader's eye.
func TestCLIPrintsNoControls(t *testing.T) {
	const hostile = "\x1b]52;c;cm0gLXJmIH4K\x07\r\nz/forged: Applied\u009b2J\u202eexe"
	q := strconv.QuoteToASCII // YAML's double-quoted escapes, for ASCII
	monocle := func(meta, spec, status string) string {
		return "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: " + meta + "\nspec: " + spec + "\nstatus: " + status + "\n"
	}
	badConfig := "{config: " + q("workspaces:\n  - name: "+q(hostile)+"\n    crawlers: []\n") + "}"
	tests := map[string]struct {
		run   func(stdin string, stdout, stderr *bytes.Buffer) int
		stdin string
		lines int // what stdout and stderr hold, in lines
	}{
		"check: a workspace name": {
			run: runCheck, stdin: monocle("{name: m, namespace: a}", badConfig, "{}"), lines: 2,
		},
		"check: a Monocle's name and namespace": {
			run: runCheck, stdin: monocle("{name: "+q(hostile)+", namespace: "+q(hostile)+"}", badConfig, "{}"), lines: 2,
		},
		"check: the image its status says runs": {
			run: runCheck, stdin: monocle("{name: m, namespace: a}", "{}", "{versions: {monocle: "+q(hostile)+"}}"), lines: 2,
		},
		"render: what it holds": {
			run: runRender, stdin: monocle("{name: m, namespace: a}",
				"{config: "+q("workspaces:\n  - name: demo\n    crawlers:\n      - {name: "+q(hostile)+", update_since: '2024-01-01', provider: {github_organization: x}}\n")+"}", "{}"),
			lines: 1,
		},
		"render: a spec it refuses": {
			run: runRender, stdin: monocle("{name: m, namespace: a}", badConfig, "{}"), lines: 1,
		},
		"render: a wrong flag": {
			run: func(_ string, stdout, stderr *bytes.Buffer) int {
				return run([]string{"render", "--" + hostile}, strings.NewReader(""), stdout, stderr)
			},
			lines: -1, // the usage follows, on lines of its own
		},
		"restore: a wrong flag": {
			run: func(_ string, stdout, stderr *bytes.Buffer) int {
				return run([]string{"restore", "--" + hostile}, strings.NewReader(""), stdout, stderr)
			},
			lines: -1,
		},
		"render: an error quoting the input": {
			run: runRender, stdin: "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Secret, metadata: {name: " + q(hostile) + "}, data: {k: " + q(hostile) + "}}]\n", lines: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			tc.run(tc.stdin, &stdout, &stderr)
			text := stderr.String()
			if strings.HasPrefix(name, "check") {
				text = stdout.String()
			}
			if got := strings.Count(text, "\n"); tc.lines >= 0 && got != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", got, tc.lines, text)
			}
			// A usage's own tabs and newlines are meant: a value's are escaped.
			if !printable.Clean(strings.NewReplacer("\n", "", "\t", "").Replace(text)) {
				t.Errorf("a control or bidi character in %q", text)
			}
		})
	}
}

func runCheck(stdin string, stdout, stderr *bytes.Buffer) int {
	return check([]string{"-f", "-"}, strings.NewReader(stdin), stdout, stderr)
}

func runRender(stdin string, stdout, stderr *bytes.Buffer) int {
	return run([]string{"render", "-f", "-"}, strings.NewReader(stdin), &bytes.Buffer{}, stderr)
}

// The commands the CLI's errors print are command.Forms: check's on input
// without a Monocle.
func TestCLIErrorCommandsAreForms(t *testing.T) {
	for name, args := range map[string][]string{
		"check": {"check", "-f", "-"},
	} {
		var stderr bytes.Buffer
		run(args, strings.NewReader("apiVersion: v1\nkind: List\nitems: []\n"), &bytes.Buffer{}, &stderr)
		if !strings.Contains(stderr.String(), "kubectl") {
			t.Fatalf("%s: no command in its error: %s", name, stderr.String())
		}
		if rest := command.Strip(stderr.String()); strings.Contains(rest, "kubectl") {
			t.Errorf("%s prints a command that is not one of command.Forms: %s", name, rest)
		}
	}
}
