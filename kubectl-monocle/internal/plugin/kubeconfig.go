package plugin

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigFlags are kubectl's own: --kubeconfig and the overrides of its
// context (-n, --context, --as, -s...), bound by client-go's clientcmd as
// cli-runtime's ConfigFlags binds them. ConfigFlags would link kustomize
// and every API group's typed client for them: 614 packages in the plugin
// instead of 373, compiled for each platform of the release, a binary 12 MB
// larger (BENCHMARKS.md).
type KubeconfigFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
	userExtra []string
	config    clientcmd.ClientConfig
}

// NewKubeconfigFlags loads as kubectl does: with no kubeconfig at all, the
// namespace is "default" and the server $KUBERNETES_MASTER, else
// http://localhost:8080.
func NewKubeconfigFlags() *KubeconfigFlags {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.DefaultClientConfig = &clientcmd.DefaultClientConfig
	return &KubeconfigFlags{rules: rules, overrides: clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}}
}

func (f *KubeconfigFlags) AddFlags(flags *pflag.FlagSet) {
	names := clientcmd.RecommendedConfigOverrideFlags("")
	names.ClusterOverrideFlags.APIServer.ShortName = "s"
	// No basic auth, as kubectl has none: the API server dropped it in
	// 1.19, and a password flag leaves the password in the shell's history.
	names.AuthOverrideFlags.Username, names.AuthOverrideFlags.Password = clientcmd.FlagInfo{}, clientcmd.FlagInfo{}
	flags.StringVar(&f.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use for CLI requests.")
	clientcmd.BindOverrideFlags(&f.overrides, flags, names)
	flags.StringArrayVar(&f.userExtra, "as-user-extra", nil, "User extras to impersonate for the operation, key=value; this flag can be repeated to specify multiple values for the same key.")
}

// ClientConfig is the kubeconfig the flags give, made once: the file's,
// else the in-cluster one, the flags over either.
func (f *KubeconfigFlags) ClientConfig() (clientcmd.ClientConfig, error) {
	if f.config != nil {
		return f.config, nil
	}
	for _, extra := range f.userExtra {
		key, value, ok := strings.Cut(extra, "=")
		if !ok || key == "" {
			return nil, UsageError{Err: fmt.Errorf("--as-user-extra %q: want key=value", extra)}
		}
		if f.overrides.AuthInfo.ImpersonateUserExtra == nil {
			f.overrides.AuthInfo.ImpersonateUserExtra = map[string][]string{}
		}
		f.overrides.AuthInfo.ImpersonateUserExtra[key] = append(f.overrides.AuthInfo.ImpersonateUserExtra[key], value)
	}
	f.config = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(f.rules, &f.overrides)
	return f.config, nil
}
