package main

import (
	"bytes"
)

// runWith runs the plugin with args on c: its exit code, stdout, stderr.
func runWith(c *clients, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr, func(string) (*clients, error) { return c, nil })
	return code, stdout.String(), stderr.String()
}
