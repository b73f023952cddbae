// kubectl-monocle is a kubectl plugin for Monocles (`kubectl monocle ...`):
// status says how one is doing, check is the upgrade gate of
// `monocle-hook check`, reading the cluster itself; backup, restore and
// janitor are the routine tasks, each one command that does the whole
// task. It works with the user's own kubeconfig and rights.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/monocleapi"
)

// version is stamped with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// errRefused: check found a Monocle that would not apply in full (exit 1),
// and said so on stdout.
var errRefused = errors.New("a Monocle would not apply in full")

// usageError is a wrong flag or argument (exit 2, as any failure to read
// the cluster).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// oneName is the argument check of a command that takes one Monocle's
// name.
func oneName(command string, args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Errorf("%s takes one Monocle's name, got %d arguments", command, len(args))}
	}
	return nil
}

// clients reach the cluster; tests give fakes.
type clients struct {
	dyn dynamic.Interface
	// crawlers is Monocle's API of the Service name in namespace, through
	// the API server's service proxy.
	crawlers func(namespace, service string) monocleapi.CrawlerAPI
	// logs opens the log of a pod's container: followed until the
	// container ends, or its last lines (at most limit bytes).
	logs func(ctx context.Context, namespace, pod string, follow bool, limit int64) (io.ReadCloser, error)
}

// run runs the command args and gives its exit code: 0 done (or --help),
// 1 check found a Monocle that would not apply in full, 2 a usage error or
// a failure to read the cluster. connect, when not nil, replaces the
// clients the kubeconfig flags give (tests).
func run(args []string, stdout, stderr io.Writer, connect func(namespace string) (*clients, error)) int {
	root := newRoot(stdout, stderr, connect)
	root.SetArgs(args)
	// Ctrl-C ends a wait, and a restore then says how to resume or undo.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errRefused):
		return 1
	}
	var exit errExit
	if errors.As(err, &exit) {
		fmt.Fprintln(stderr, "kubectl monocle:", printable.Escape(err.Error()))
		return exit.code
	}
	fmt.Fprintln(stderr, "kubectl monocle:", printable.Escape(err.Error()))
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintln(stderr, "See 'kubectl monocle --help'.")
	}
	return 2
}

// options are what every command shares: the kubeconfig flags and how to
// connect.
type options struct {
	flags   *genericclioptions.ConfigFlags
	connect func(namespace string) (*clients, error)
	// hookImage is the image the hook runs its snapshots with (its
	// --image): what the plugin answers as the hook would.
	hookImage string
}

// namespace is -n, else the kubeconfig context's, else default.
func (o *options) namespace() (string, error) {
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return ns, nil
}

// target is the namespace the command works in and the clients that
// reach it.
func (o *options) target() (string, *clients, error) {
	ns, err := o.namespace()
	if err != nil {
		return "", nil, err
	}
	c, err := o.clients(ns)
	return ns, c, err
}

func (o *options) clients(namespace string) (*clients, error) {
	if o.connect != nil {
		return o.connect(namespace)
	}
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.UserAgent = "kubectl-monocle/" + version
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &clients{dyn: dyn, crawlers: func(namespace, service string) monocleapi.CrawlerAPI {
		return &monocleapi.MonocleAPI{Client: httpClient, BaseURL: monocleapi.ServiceProxyURL(cfg.Host, namespace, service)}
	}, logs: func(ctx context.Context, namespace, pod string, follow bool, limit int64) (io.ReadCloser, error) {
		// The HTTP client the kubeconfig gives: a typed client would link
		// client-go's scheme of every API group for this one GET.
		query := url.Values{"tailLines": {"1000"}, "limitBytes": {strconv.FormatInt(limit, 10)}}
		if follow {
			query = url.Values{"follow": {"true"}}
		}
		u := strings.TrimSuffix(cfg.Host, "/") + "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(pod) + "/log?" + query.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return resp.Body, nil
	}}, nil
}

func newRoot(stdout, stderr io.Writer, connect func(namespace string) (*clients, error)) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), connect: connect}
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
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl monocle"},
		Version:           version,
		SilenceErrors:     true,
		SilenceUsage:      true,
		Args:              noArgs,
		RunE:              func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	o.flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.hookImage, "hook-image", defaultHookImage(version), "the image the hook runs with (its --image, the chart's image): backup and restore build their Jobs with it, as the hook answers")
	root.AddCommand(newStatus(o), newCheck(o), newBackup(o), newRestore(o), newJanitor(o))
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
		return usageError{fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
	}
	return nil
}

// completeMonocles completes a Monocle's name in the namespace.
func completeMonocles(o *options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns, err := o.namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		c, err := o.clients(ns)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list, err := c.dyn.Resource(monocleGVR).Namespace(ns).List(cmd.Context(), listOptions(""))
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []cobra.Completion
		for _, m := range list.Items {
			names = append(names, m.GetName())
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
