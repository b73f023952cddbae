package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// SetUp makes root the plugin's root command, of commands: it writes to
// stdout and stderr, says nothing itself of an error (Execute does), takes
// a wrong flag for a usage error, and gives every command the kubeconfig
// flags and --hook-image (hookImage its default), into o.
func SetUp(root *cobra.Command, o *Options, stdout, stderr io.Writer, hookImage string, commands ...func(*Options) *cobra.Command) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = "kubectl monocle"
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{Err: err} })
	o.Flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.HookImage, "hook-image", hookImage, "the image the hook runs with (its --image, the chart's image): backup and restore build their Jobs with it, as the hook answers")
	for _, c := range commands {
		root.AddCommand(c(o))
	}
}

// Execute runs root on args and gives its exit code: 0 done (or --help),
// 1 check found a Monocle that would not apply in full, an ErrExit's own,
// 2 a usage error or a failure to read the cluster.
func Execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	// Ctrl-C ends a wait, and a restore then says how to resume or undo.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrRefused):
		return 1
	}
	var exit ErrExit
	if errors.As(err, &exit) {
		fmt.Fprintln(stderr, "kubectl monocle:", printable.Escape(err.Error()))
		return exit.Code
	}
	fmt.Fprintln(stderr, "kubectl monocle:", printable.Escape(err.Error()))
	var u UsageError
	if errors.As(err, &u) {
		fmt.Fprintln(stderr, "See 'kubectl monocle --help'.")
	}
	return 2
}
