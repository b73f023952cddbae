package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/internal/command"
)

// check is a gate: it lists what an upgrade would hold or roll, counts
// what it checked, and fails on input with no Monocle (a failed kubectl
// get in docs/upgrade.md's pipe) rather than passing on nothing.
func TestCheckGate(t *testing.T) {
	tests := map[string]struct {
		args  []string
		stdin string
		code  int
		out   []string
		err   string
	}{
		"empty input, as a failed kubectl get gives": {args: []string{"-f", "-"}, code: 2, err: "no Monocle in the input"},
		"a List of other objects":                    {args: []string{"-f", "-"}, stdin: "apiVersion: v1\nkind: List\nitems: []\n", code: 2, err: "no Monocle in the input"},
		"the test objects": {args: []string{"-f", "hook/testdata/check-objects.yaml"}, code: 1, out: []string{
			"b/old-bounds: InvalidSpec: spec.tolerations[0].value",
			"b/old-image: rolls the API and the crawler from quay.io/change-metrics/monocle:1.10.0 to quay.io/change-metrics/monocle:1.11.2",
			"b/slash: rolls the API from https://monocle.example.com/ to https://monocle.example.com (its public URL as Monocle serves it)",
			"Monocles checked: 10; applied in full: 5; not: 5; rolled: 2",
		}},
		"an example": {args: []string{"-f", "examples/monocle-sample.yaml"}, code: 0, out: []string{"Monocles checked: 1; applied in full: 1; not: 0; rolled: 0"}},
		"no -f":      {code: 2, err: "-f is required"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := check(tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			for _, want := range tc.out {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout does not say %q:\n%s", want, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tc.err) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tc.err)
			}
		})
	}
}

// Past its input limit, check says so and exits 2: never a cut list,
// whose Monocles (or the Secrets they read) the report would leave out.
func TestCheckInputOverItsLimit(t *testing.T) {
	defer func(m int) { maxInput = m }(maxInput)
	objects, err := os.ReadFile("hook/testdata/check-objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	maxInput = len(objects) - 1
	var stdout, stderr bytes.Buffer
	if code := check([]string{"-f", "-"}, bytes.NewReader(objects), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "kubectl monocle check -A") {
		t.Errorf("exit %d, stderr %q; want 2 and where to read it from", code, stderr.String())
	}
	if rest := command.Strip(stderr.String()); strings.Contains(rest, "kubectl") {
		t.Errorf("prints a command that is not one of command.Forms: %s", rest)
	}
	maxInput = len(objects)
	if code := check([]string{"-f", "-"}, bytes.NewReader(objects), &stdout, &stderr); code != 1 {
		t.Errorf("at its limit: exit %d, want 1 (the report)", code)
	}
}
