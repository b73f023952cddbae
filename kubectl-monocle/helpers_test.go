package main

import (
	"bytes"

	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// runWith runs the plugin with args on c: its exit code, stdout, stderr.
func runWith(c *plugin.Clients, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr, func(string) (*plugin.Clients, error) { return c, nil })
	return code, stdout.String(), stderr.String()
}
