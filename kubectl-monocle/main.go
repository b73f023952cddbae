// kubectl-monocle is a kubectl plugin for Monocles (`kubectl monocle ...`):
// status says how one is doing, check is the upgrade gate of
// `monocle-hook check`, reading the cluster itself; backup, restore and
// janitor are the routine tasks, each one command that does the whole
// task. It works with the user's own kubeconfig and rights.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/backup"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/check"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/janitor"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/restore"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/status"
)

// version is stamped with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run runs the command args and gives its exit code: 0 done (or --help),
// 1 check found a Monocle that would not apply in full, 2 a usage error or
// a failure to read the cluster. connect, when not nil, replaces the
// clients the kubeconfig flags give (tests).
func run(args []string, stdout, stderr io.Writer, connect func(namespace string) (*plugin.Clients, error)) int {
	return plugin.Execute(newRoot(stdout, stderr, connect), args, stderr)
}

func newRoot(stdout, stderr io.Writer, connect func(namespace string) (*plugin.Clients, error)) *cobra.Command {
	o := &plugin.Options{Flags: plugin.NewKubeconfigFlags(), Connect: connect, Version: version}
	root := &cobra.Command{
		Use:   "kubectl-monocle",
		Short: "Monocles' status, upgrade check, snapshots, restores and janitor, from the cluster",
		Long: `kubectl monocle: how a Monocle is doing (status), which Monocles an upgrade of monocle-hook would
hold (check), and the routine tasks, each one command that does the whole task: a snapshot now
(backup), a restore (restore), one of Monocle's janitor commands (janitor). It works with your
kubeconfig and your rights: status and check write nothing.

Exit codes: 0 done; 1 check found a Monocle that would not apply in full, or a backup's or a
restore's Job failed (janitor exits as the janitor did); 2 a usage error, a refusal, or the
cluster could not be read.`,
		Version:           version,
		Args:              noArgs,
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	plugin.SetUp(root, o, stdout, stderr, defaultHookImage(version), status.New, check.New, backup.New, restore.New, janitor.New)
	return root
}

// defaultHookImage is the hook's image of the plugin's own release (the
// chart of that version runs the hook with it, when its image is not
// pinned by digest); a build of no release knows none but the hook's own
// default.
func defaultHookImage(version string) string {
	if version == "dev" {
		return elastic.DefaultHookImage
	}
	return instance.ImageRepository + ":" + version
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return plugin.UsageError{Err: fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
	}
	return nil
}
