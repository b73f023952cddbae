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
// Reading is bounded for any input: the size, and the nodes the text may
// make (counted from its bytes, prescan.go), are checked before parsing;
// what the YAML expands to (aliases counted as their targets, never
// expanded), before anything walks it. ParseCostOf bounds what Parse
// allocates, for a memory budget.
//
// Where it cannot be equal, on purpose or not: the limits refuse configs
// Monocle would read; go.yaml.in/yaml/v3 is not HsYAML, so exotic YAML may
// parse in one and not the other (yaml.v3 refuses nesting over 10000 levels;
// the %YAML versions and the "!" tag it reads otherwise are given back,
// hsyaml.go, in UTF-8 text, but for a lone "!" before a flow ",", which
// yaml.v3 does not parse);
// update_since is checked for every crawler with entities, though Monocle
// reads it only for those it has not crawled yet.
package monocleconfig

import (
	"cmp"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/change-metrics/monocle-hook/internal/printable"
)

// Limits bound the work Parse does on one config.
type Limits struct {
	// MaxBytes is the largest config read; larger ones are refused unparsed.
	MaxBytes int
	// MaxNodes bounds the YAML nodes, keys included: before parsing, the
	// nodes the text may make, as counted from its bytes (prescan.go,
	// where a line with a comment, and a block collection opened in the
	// middle of a line, count for more); after parsing, the nodes once
	// aliases are expanded.
	MaxNodes int64
	// MaxExpandedBytes bounds the bytes of scalars, keys included, once
	// aliases are expanded.
	MaxExpandedBytes int64
	// MaxDepth bounds how deep collections nest.
	MaxDepth int
}

// MaxBytes is the largest config Parse reads: 255 KiB, what Metacontroller
// can apply (the hook holds a config to it JSON-escaped, hook.MaxConfigJSON,
// the last-applied annotation's 256 KiB less 1 KiB; measured on the API
// server by e2e's TestConfigSizeBoundOnTheServer).
const MaxBytes = 255 << 10

// DefaultLimits are the limits Parse applies. MaxNodes keeps what yaml.v3
// allocates on any config of MaxBytes, whatever its shape, within
// maxParseCost (TestParseCost), and leaves realistic configs of MaxBytes
// room (TestRealisticMargins); BENCHMARKS.md has the figures.
var DefaultLimits = Limits{
	MaxBytes:         MaxBytes,
	MaxNodes:         1 << 16,
	MaxExpandedBytes: 4 * MaxBytes,
	MaxDepth:         1000,
}

// The cost model of ParseCostOf, for DefaultLimits: each term bounds what
// Parse allocates on the costliest shapes found (TestParseCost, whose
// report BENCHMARKS.md keeps).
const (
	// costPerCount is charged per node counted before parsing.
	costPerCount = 288
	// costPerByte: long scalars, anchors and tags cost more than their
	// nodes.
	costPerByte = 8
	// costPerFlowLevel is charged per '[' and '{', for at most
	// maxFlowLevels: a level of flow nesting costs more than the 2 nodes
	// its brackets count for.
	costPerFlowLevel = 320
	maxFlowLevels    = 10000 // yaml.v3's max_flow_level
	// costOfAliases is charged when the config may hold an alias: the
	// decode then reads the nodes aliases expand to, up to MaxNodes.
	costOfAliases = 6 << 20
	// costBase is what the smallest config costs, with room.
	costBase = 64 << 10
	// maxParseCost bounds what Parse allocates on any config. The terms
	// above do not all reach their maximum at once: counted nodes are
	// either many cheap ones or nested ones, and a config nested deeper
	// than MaxDepth is refused before its aliases are read.
	maxParseCost = 22 << 20
)

// ParseCostOf bounds the bytes Parse allocates on data, for a memory
// budget. It reads data once, without allocating (except for UTF-16, which
// it decodes), and is far closer than a bound by size alone for most
// configs.
func ParseCostOf(data []byte) int64 {
	if len(data) > DefaultLimits.MaxBytes {
		return costBase
	}
	b := boundYAML(data)
	if b.units() > DefaultLimits.MaxNodes || b.directiveLines > maxDirectiveLines {
		return costBase + 4*int64(len(data)) // refused unparsed
	}
	cost := costPerCount*b.units() + costPerByte*int64(len(data)) + costPerFlowLevel*int64(min(b.flowOpeners, maxFlowLevels))
	if b.aliases > 0 {
		cost += costOfAliases
	}
	return min(cost, maxParseCost) + costBase
}

// Config is what the hook needs from a valid config.
type Config struct {
	// Workspaces in the config's order.
	Workspaces []Workspace
	// Ignored are the paths of keys Monocle ignores (unknown to its
	// schema), in the config's order; at most 20 are listed.
	Ignored []string
	// Tokens are the provider tokens the crawler reads once running from
	// variables its pods lack. They do not make the config invalid.
	Tokens Tokens
	// OIDC: the config sets an OIDC auth provider, whose login state each
	// API process keeps in memory (src/Monocle/Api/Jwt.hs, sessionStore).
	OIDC bool
	// EnforceAuth: the config asks for login (auth.enforce_auth: true).
	EnforceAuth bool
	// OIDCSecret is the variable the API reads the OIDC client secret from
	// once running (src/Monocle/Config.hs:294-296), "" without OIDC. Set
	// but empty, it is as missing (Config.hs:309-313): login is off.
	OIDCSecret string
	// Warnings are about what Monocle accepts but does not do: login
	// without the OIDC client secret, which the API reads once running
	// (it starts without login), auth.extra_auth_providers (never read),
	// crawlers that never crawl or get nothing to crawl from the config.
	// In the config's order, at most 20 are listed; when there are more, a
	// last one, at the whole document, counts the rest.
	Warnings []Problem
}

// Workspace is a workspace as update-idents and the janitor read it.
type Workspace struct {
	Name string
	// Crawlers are its crawlers' names, in the config's order.
	Crawlers []string
	// Entities are, for each of Crawlers, the kinds of entity its streams
	// crawl (EntityOrganization, ...; none for a crawler Monocle's crawler
	// does not run), whose commits the API keeps per crawler.
	Entities [][]string
	// Idents as Monocle reads them: nil when the workspace has none (absent
	// or null), else a []any of map[string]any with "ident" (string),
	// "aliases" ([]any of string) and, when given, "groups" ([]any of
	// string). Keys Monocle ignores are left out, so they do not change a
	// hash of it; key-value lists are read as maps, as Monocle does.
	Idents any
	// APIKey is the variable the crawlers' API key is read from
	// (crawlers_api_key, default CRAWLERS_API_KEY: src/Monocle/Config.hs:185-198).
	APIKey string
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
	maxWarnings = 20
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
	var parts []string
	for _, p := range e.Problems {
		parts = append(parts, cutText(p.String(), 400))
	}
	if more := e.Total - len(e.Problems); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	// The last guard: whatever a problem quotes, it is shown as text.
	return cutText(printable.Escape(strings.Join(parts, "; ")), maxMessage)
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
	// yaml.v3 builds its whole node graph before any limit below can look
	// at it: bound it from the bytes first (prescan.go).
	switch b := boundYAML(data); {
	case b.units() > limits.MaxNodes:
		return nil, single("", fmt.Sprintf("more than %d YAML nodes, as counted before parsing: each key, value, '-', ':', ',' or bracket may make one, and a line with a comment counts as %d", limits.MaxNodes, commentLineNodes))
	case b.directiveLines > maxDirectiveLines:
		return nil, single("", fmt.Sprintf("more than %d lines that start with %%, which may be YAML directives", maxDirectiveLines))
	}
	root, err := decodeDocument(data)
	if err != nil {
		return nil, single("", err.Error())
	}
	// What root expands to: the measure stops at the first problem, an
	// *Error; a limit passed is the whole document's.
	m := &measurer{limits: limits, memo: map[*yaml.Node]cost{}, pending: map[*yaml.Node]bool{}}
	if _, err := m.measure(root, 1); err != nil {
		return nil, err
	}

	s := &sink{}
	c := &checker{decoder: decoder{sink: s}, env: env}
	value, _ := c.decode(configType, root)
	// The rest of Monocle's rules run on what decoded, so that one answer
	// lists the problems of both kinds.
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
