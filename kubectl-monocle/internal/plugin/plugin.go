// Package plugin is what the commands of kubectl-monocle share: the
// options and the clients, the usage and exit-code errors, the one-name
// check and Monocle completion, the GVRs, and the Jobs the commands build
// from the hook's answer, run and follow.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/monocleapi"
)

var (
	MonocleGVR   = schema.GroupVersionResource{Group: hook.Group, Version: hook.Version, Resource: "monocles"}
	PodGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	ConfigMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	SecretGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

func ListOptions(selector string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: selector}
}

// ErrRefused: check found a Monocle that would not apply in full (exit 1),
// and said so on stdout.
var ErrRefused = errors.New("a Monocle would not apply in full")

// UsageError is a wrong flag or argument (exit 2, as any failure to read
// the cluster).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }

func (e UsageError) Unwrap() error { return e.Err }

// OneName is the argument check of a command that takes one Monocle's
// name.
func OneName(command string, args []string) error {
	if len(args) != 1 {
		return UsageError{fmt.Errorf("%s takes one Monocle's name, got %d arguments", command, len(args))}
	}
	return nil
}

// Clients reach the cluster; tests give fakes.
type Clients struct {
	Dyn dynamic.Interface
	// Crawlers is Monocle's API of the Service name in namespace, through
	// the API server's service proxy.
	Crawlers func(namespace, service string) monocleapi.CrawlerAPI
	// Logs opens the log of a pod's container: followed until the
	// container ends, or its last lines (at most limit bytes).
	Logs func(ctx context.Context, namespace, pod string, follow bool, limit int64) (io.ReadCloser, error)
}

// Options are what every command shares: the kubeconfig flags and how to
// connect.
type Options struct {
	Flags   *KubeconfigFlags
	Connect func(namespace string) (*Clients, error)
	// HookImage is the image the hook runs its snapshots with (its
	// --image): what the plugin answers as the hook would.
	HookImage string
	// Version is the plugin's, of its User-Agent.
	Version string
}

// Namespace is -n, else the kubeconfig context's, else default.
func (o *Options) Namespace() (string, error) {
	config, err := o.Flags.ClientConfig()
	if err != nil {
		return "", err
	}
	ns, _, err := config.Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return ns, nil
}

// Target is the namespace the command works in and the clients that
// reach it.
func (o *Options) Target() (string, *Clients, error) {
	ns, err := o.Namespace()
	if err != nil {
		return "", nil, err
	}
	c, err := o.Clients(ns)
	return ns, c, err
}

func (o *Options) Clients(namespace string) (*Clients, error) {
	if o.Connect != nil {
		return o.Connect(namespace)
	}
	config, err := o.Flags.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg, err := config.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.UserAgent = "kubectl-monocle/" + o.Version
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Dyn: dyn, Crawlers: func(namespace, service string) monocleapi.CrawlerAPI {
		return &monocleapi.MonocleAPI{Client: httpClient, BaseURL: monocleapi.ServiceProxyURL(cfg.Host, namespace, service)}
	}, Logs: func(ctx context.Context, namespace, pod string, follow bool, limit int64) (io.ReadCloser, error) {
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

// CompleteMonocles completes a Monocle's name in the namespace.
func CompleteMonocles(o *Options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns, err := o.Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		c, err := o.Clients(ns)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list, err := c.Dyn.Resource(MonocleGVR).Namespace(ns).List(cmd.Context(), ListOptions(""))
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
