// Package testbodies makes the sync request bodies the memory tests, the
// benchmarks and the attack run (tools/loadtest attack) send: a real
// recorded request with a config of a given size, an alias bomb, or grown
// to a given size. The hook itself never imports it.
package testbodies

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Config is a config.yaml of at least size bytes, shaped like a real one:
// workspaces of five GitHub crawlers and five idents each.
func Config(size int) string {
	var b strings.Builder
	b.WriteString("workspaces:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  - name: ws%d\n    crawlers:\n", i)
		for j := range 5 {
			fmt.Fprintf(&b, "      - name: c%d-%d\n        update_since: \"2024-01-01\"\n        provider:\n"+
				"          github_organization: org%d\n          github_repositories: [repo-a, repo-b, repo-c]\n"+
				"          github_token: GITHUB_TOKEN\n", i, j, j)
		}
		b.WriteString("    idents:\n")
		for j := range 5 {
			fmt.Fprintf(&b, "      - ident: Person %d %d\n        aliases: [\"github.com/p%d-%d\", \"gitlab.com/p%d-%d\"]\n", i, j, i, j, i, j)
		}
	}
	return b.String()
}

// AliasBomb is a YAML document of anchorBytes bytes anchored once and
// aliased refs times: a few KB that a YAML decoder without a bound on
// expanded size turns into anchorBytes x refs bytes (the is
// 10,000 x 2,500: 17.5 KB for 25 MB of strings).
func AliasBomb(anchorBytes, refs int) string {
	var b strings.Builder
	b.WriteString("s: &s " + strings.Repeat("A", anchorBytes) + "\nx: [")
	for i := range refs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("*s")
	}
	b.WriteString("]\n")
	return b.String()
}

// WithSpec is the sync request body with one field of its parent's spec
// set.
func WithSpec(body []byte, field string, value any) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	parent, ok := req["parent"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the body has no parent")
	}
	spec, _ := parent["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		parent["spec"] = spec
	}
	spec[field] = value
	return json.Marshal(req)
}

// Grown is the sync request body with copies of one of its observed
// ConfigMaps, each with its own name, until it is at least size bytes. The
// copies are not named as the hook names its children, so the answer is
// the same: only the request grows.
func Grown(body []byte, size int) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	children, _ := req["children"].(map[string]any)
	configMaps, _ := children["ConfigMap.v1"].(map[string]any)
	names := slices.Sorted(maps.Keys(configMaps))
	if len(names) == 0 {
		return nil, fmt.Errorf("the body has no observed ConfigMap to copy")
	}
	template, err := json.Marshal(configMaps[names[0]])
	if err != nil {
		return nil, err
	}
	for i, have := 0, len(body); have < size; i++ {
		var cm map[string]any
		if err := json.Unmarshal(template, &cm); err != nil {
			return nil, err
		}
		md, _ := cm["metadata"].(map[string]any)
		if md == nil {
			return nil, fmt.Errorf("the observed ConfigMap has no metadata")
		}
		name := fmt.Sprintf("extra-%05d", i)
		md["name"], md["uid"] = name, fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		configMaps[name] = cm
		have += len(template) + len(name) + 4
	}
	return json.Marshal(req)
}
