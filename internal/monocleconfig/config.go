// Package monocleconfig validates a Monocle config.yaml as Monocle 1.11.2
// does when it starts, never stricter and never looser, so that a config
// Monocle would refuse never reaches its pods.
//
// Monocle's config loader (src/Monocle/Config.hs, loadConfigWithoutEnv and
// loadConfig) reads the YAML with dhall-yaml's dhallFromYaml against the
// Dhall type of schemas/monocle/config/Config/Type.dhall, extracts it (which
// checks workspace names with mkIndexName), then reads the environment
// variable each workspace's crawlers_api_key names. Any failure is fatal to
// the API, the crawler and the janitor. The API then refuses to start on a
// search alias that does not parse, a GitHub auth provider, a workspace whose
// Elasticsearch index name Elasticsearch refuses, or a crawler date it cannot
// parse; those are checked too. Which source file each rule comes from is
// said where the rule is written.
//
// Reading is bounded for any input: the size is checked before parsing, and
// what the YAML expands to (aliases counted as their targets, never
// expanded) before anything walks it.
//
// Where it cannot be equal, on purpose or not: the limits refuse configs
// Monocle would read; go.yaml.in/yaml/v3 is not HsYAML, so exotic YAML may
// parse in one and not the other (yaml.v3 refuses %YAML 1.3 and nesting over
// 10000 levels, and drops the "!" tag that makes a plain scalar a string);
// update_since is checked for every crawler with entities, though Monocle
// reads it only for those it has not crawled yet.
package monocleconfig

import (
	"cmp"
	"fmt"
	"strings"
)

// Limits bound the work Parse does on one config.
type Limits struct {
	// MaxBytes is the largest config read; larger ones are refused unparsed.
	MaxBytes int
	// MaxNodes bounds the YAML nodes, keys included, once aliases are
	// expanded.
	MaxNodes int64
	// MaxExpandedBytes bounds the bytes of scalars, keys included, once
	// aliases are expanded.
	MaxExpandedBytes int64
	// MaxDepth bounds how deep collections nest.
	MaxDepth int
}

// MaxBytes is the largest config Parse reads.
// TODO(lead): set to the size Metacontroller can apply, once measured.
const MaxBytes = 256 << 10

// DefaultLimits are the limits Parse applies. A config of MaxBytes without
// aliases is within them unless made of tiny nodes: a flow list of one-letter
// items (a node per 2 bytes) fits, a flow map of keys without values (a node
// per byte) does not. A real config has a node per 8 bytes or more.
var DefaultLimits = Limits{
	MaxBytes:         MaxBytes,
	MaxNodes:         1 << 17,
	MaxExpandedBytes: 4 * MaxBytes,
	MaxDepth:         1000,
}

// ParseCost bounds the bytes Parse allocates on a config of n bytes, for a
// memory budget. Nearly all of it is yaml.v3's node graph, which Parse needs
// whole and which is live until Parse returns. Measured (limits_test.go): a
// realistic config costs about 31 bytes per byte; the worst shapes found are
// lines of empty entries with comments ("? #", "- #"), about 350 bytes per
// byte, 92 MB for 256 KiB.
func ParseCost(n int) int64 { return 384*int64(n) + 64<<10 }

// Config is what the hook needs from a valid config.
type Config struct {
	// Workspaces in the config's order.
	Workspaces []Workspace
	// Ignored are the paths of keys Monocle ignores (unknown to its
	// schema), in the config's order; at most 20 are listed.
	Ignored []string
	// Warnings are about environment variables Monocle reads only once
	// running, which the pods lack: a provider token (the crawler fails on
	// that crawler) or an OIDC client secret (the API starts without login).
	// They do not make the config invalid; at most 20 are listed.
	Warnings []Problem
}

// Workspace is a workspace as update-idents reads it.
type Workspace struct {
	Name string
	// Idents as Monocle reads them: nil when the workspace has none (absent
	// or null), else a []any of map[string]any with "ident" (string),
	// "aliases" ([]any of string) and, when given, "groups" ([]any of
	// string). Keys Monocle ignores are left out, so they do not change a
	// hash of it; key-value lists are read as maps, as Monocle does.
	Idents any
}

// Problem is one reason a config is refused, or a warning.
type Problem struct {
	// Path names the value, as in workspaces[1].crawlers[0].update_since;
	// empty for the whole document.
	Path    string
	Message string
}

// String is "path: message", the whole document being config.yaml.
func (p Problem) String() string {
	return cmp.Or(p.Path, "config.yaml") + ": " + p.Message
}

const (
	maxProblems = 10
	maxIgnored  = 20
	maxMessage  = 2048
)

// Error is a config Monocle would refuse: the first problems found (at most
// 10), and how many there are in all.
type Error struct {
	Problems []Problem
	// Total counts every problem found, listed or not.
	Total int
}

// Error joins the problems with "; ", at most about 2 KiB.
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(cutText(p.String(), 400))
	}
	total := max(e.Total, len(e.Problems))
	if more := total - len(e.Problems); more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return cutText(b.String(), maxMessage)
}

// Parse validates data as Monocle 1.11.2 reads its config.yaml. env reports
// whether an environment variable is set in the API's and crawler's pods
// (set at all: Monocle accepts an empty value); a nil env skips the checks of
// environment variables. The error, when not nil, is an *Error.
func Parse(data []byte, env func(name string) bool) (*Config, error) {
	return ParseWithLimits(data, env, DefaultLimits)
}

// ParseWithLimits is Parse with other limits.
func ParseWithLimits(data []byte, env func(name string) bool, limits Limits) (*Config, error) {
	if len(data) > limits.MaxBytes {
		return nil, single("", fmt.Sprintf("the config is %d bytes, more than the %d this operator reads", len(data), limits.MaxBytes))
	}
	root, err := decodeDocument(data)
	if err != nil {
		return nil, single("", err.Error())
	}
	if err := measureDocument(root, limits); err != nil {
		if e, ok := err.(*Error); ok {
			return nil, e
		}
		return nil, single("", err.Error())
	}

	s := &sink{}
	d := &decoder{sink: s}
	value, _ := d.decode(configType, root)
	// The rest of Monocle's rules run on what decoded, so that one answer
	// lists the problems of both kinds.
	c := &checker{sink: s, env: env}
	cfg := c.check(value)
	if s.problemCount > 0 {
		return nil, &Error{Problems: s.problems, Total: s.problemCount}
	}
	cfg.Ignored = s.ignored
	return cfg, nil
}

func single(path, message string) *Error {
	return &Error{Problems: []Problem{{Path: path, Message: message}}, Total: 1}
}
