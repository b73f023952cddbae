package plugin_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

const kubeconfig = `apiVersion: v1
kind: Config
current-context: one
contexts:
- {name: one, context: {cluster: c1, user: u1, namespace: from-one}}
- {name: two, context: {cluster: c2, user: u1}}
clusters:
- {name: c1, cluster: {server: "https://one.example:6443"}}
- {name: c2, cluster: {server: "https://two.example:6443"}}
users:
- {name: u1, user: {token: kubeconfig-token}}
`

// kubeconfigFlags parses args as the plugin's root does, with $HOME and
// $KUBECONFIG of the test's own (file, when not empty, is written there).
func kubeconfigFlags(t *testing.T, file string, args ...string) (*plugin.KubeconfigFlags, error) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBERNETES_MASTER", "")
	t.Setenv("KUBECONFIG", filepath.Join(home, "none"))
	if file != "" {
		path := filepath.Join(home, "config")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBECONFIG", path)
	}
	f := plugin.NewKubeconfigFlags()
	flags := pflag.NewFlagSet("kubectl-monocle", pflag.ContinueOnError)
	f.AddFlags(flags)
	return f, flags.Parse(args)
}

func TestKubeconfigFlags(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		args       []string
		wantNS     string
		want       rest.Config // Host, BearerToken and Impersonate only
	}{
		// No kubeconfig and no $KUBERNETES_MASTER: kubectl's default server.
		{name: "no kubeconfig", wantNS: "default", want: rest.Config{Host: "http://localhost:8080"}},
		{name: "the current context", file: kubeconfig, wantNS: "from-one",
			want: rest.Config{Host: "https://one.example:6443", BearerToken: "kubeconfig-token"}},
		{name: "another context", file: kubeconfig, args: []string{"--context", "two"}, wantNS: "default",
			want: rest.Config{Host: "https://two.example:6443", BearerToken: "kubeconfig-token"}},
		{name: "every override", file: kubeconfig,
			args: []string{"-n", "ns", "-s", "https://flag.example:6443", "--token", "flag-token", "--as", "jane",
				"--as-group", "g1", "--as-group", "g2", "--as-uid", "id", "--as-user-extra", "k=v1", "--as-user-extra", "k=v2=x"},
			wantNS: "ns",
			want: rest.Config{Host: "https://flag.example:6443", BearerToken: "flag-token", Impersonate: rest.ImpersonationConfig{
				UserName: "jane", UID: "id", Groups: []string{"g1", "g2"}, Extra: map[string][]string{"k": {"v1", "v2=x"}}}}},
		{name: "--kubeconfig over $KUBECONFIG", args: []string{"--kubeconfig", "KUBECONFIG"}, wantNS: "from-one",
			want: rest.Config{Host: "https://one.example:6443", BearerToken: "kubeconfig-token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if len(tc.args) > 0 && tc.args[0] == "--kubeconfig" {
				dir := t.TempDir()
				tc.args[1] = filepath.Join(dir, "explicit")
				if err := os.WriteFile(tc.args[1], []byte(kubeconfig), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			f, err := kubeconfigFlags(t, file, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			o := &plugin.Options{Flags: f}
			ns, err := o.Namespace()
			if err != nil || ns != tc.wantNS {
				t.Errorf("namespace %q (%v), want %q", ns, err, tc.wantNS)
			}
			config, err := f.ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := rest.Config{Host: cfg.Host, BearerToken: cfg.BearerToken, Impersonate: cfg.Impersonate}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rest config %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestKubeconfigFlagsRefused(t *testing.T) {
	for _, args := range [][]string{{"--username", "u"}, {"--password", "p"}, {"--cache-dir", "d"}} {
		if _, err := kubeconfigFlags(t, kubeconfig, args...); err == nil || !strings.Contains(err.Error(), "unknown flag") {
			t.Errorf("%v: %v, want an unknown flag", args, err)
		}
	}
	for _, extra := range []string{"k", "=v"} {
		f, err := kubeconfigFlags(t, kubeconfig, "--as-user-extra", extra)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.ClientConfig()
		var usage plugin.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "want key=value") {
			t.Errorf("--as-user-extra %q: %v, want a usage error", extra, err)
		}
	}
}
