package janitor

import (
	"github.com/spf13/cobra"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

// runWith runs the plugin's janitor with args on c: its exit code, stdout,
// stderr.
func runWith(c *plugin.Clients, args ...string) (int, string, string) {
	return plugintest.Run(c, []func(*plugin.Options) *cobra.Command{New}, args...)
}
