package plugintest

import (
	"bytes"

	"github.com/spf13/cobra"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// Run runs the command line args on c, with a root of commands set up as
// the plugin's (plugin.SetUp, plugin.Execute): its exit code, stdout,
// stderr.
func Run(c *plugin.Clients, commands []func(*plugin.Options) *cobra.Command, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	o := &plugin.Options{Flags: plugin.NewKubeconfigFlags(), Connect: func(string) (*plugin.Clients, error) { return c, nil }, Version: "dev"}
	root := &cobra.Command{Use: "kubectl-monocle"}
	plugin.SetUp(root, o, &stdout, &stderr, elastic.DefaultHookImage, commands...)
	code := plugin.Execute(root, args, &stderr)
	return code, stdout.String(), stderr.String()
}
