package main

import (
	"strings"
	"testing"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

// --help answers on stdout with 0; a wrong flag or argument is a usage
// error, 2, said on stderr; completion writes a script.
func TestExitCodes(t *testing.T) {
	c := &plugin.Clients{Dyn: plugintest.FakeCluster(t)}
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string
		stderr     string
		stdoutNone bool
	}{
		{args: []string{"--help"}, stdout: "Usage:\n  kubectl monocle [flags]"},
		{args: []string{"status", "--help"}, stdout: "kubectl monocle status NAME"},
		{args: []string{"check", "-h"}, stdout: "kubectl monocle check [-A | -n NAMESPACE] [NAME]"},
		{args: []string{"completion", "bash"}, stdout: "bash completion"},
		{args: []string{}, stdout: "Available Commands"},
		{args: []string{"--bogus"}, code: 2, stderr: "unknown flag: --bogus", stdoutNone: true},
		{args: []string{"status"}, code: 2, stderr: "status takes one Monocle's name", stdoutNone: true},
		{args: []string{"status", "a", "b"}, code: 2, stderr: "got 2 arguments", stdoutNone: true},
		// The one-name check, written once (plugin.OneName), for each command that takes it.
		{args: []string{"backup"}, code: 2, stderr: "backup takes one Monocle's name, got 0 arguments", stdoutNone: true},
		{args: []string{"restore", "a", "b", "--undo"}, code: 2, stderr: "restore takes one Monocle's name, got 2 arguments", stdoutNone: true},
		{args: []string{"status", "a", "-o", "wide"}, code: 2, stderr: `-o "wide": json or yaml`, stdoutNone: true},
		{args: []string{"check", "-A", "a"}, code: 2, stderr: "a name and -A", stdoutNone: true},
		{args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`, stdoutNone: true},
		// The cluster read fails: 2.
		{args: []string{"status", "absent", "-n", "ns"}, code: 2, stderr: `reading Monocle ns/absent: monocles.monocle.monocle.change-metrics.io "absent" not found`, stdoutNone: true},
		{args: []string{"check", "-n", "ns"}, code: 2, stderr: "no Monocle in namespace ns", stdoutNone: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runWith(c, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) || (tc.stdoutNone && stdout != "") {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if tc.code == 0 && stderr != "" {
				t.Errorf("stderr: %s", stderr)
			}
		})
	}
}
