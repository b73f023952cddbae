// Package testbodies makes the sync request bodies the memory tests, the
// benchmarks and the attack run (tools/loadtest attack) send: a real
// recorded request with a config of a given size, an alias bomb, or grown
// to a given size. The hook itself never imports it.
package testbodies

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
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

// WithChildren is a recorded all-ready request (8 children: the seven the hook
// answers and one update-idents Job) grown to total children: Jobs of older
// idents (answered as deleted), and then Secrets and ConfigMaps named with
// the instance's prefix (not the hook's, so left out of the answer too).
// Each copy gets its own name, uid and last-applied annotation. With
// invalidSpec the parent's storageSize is not a quantity: Sync then answers
// every child as last applied.
func WithChildren(allReady []byte, total int, invalidSpec bool) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(allReady, &req); err != nil {
		return nil, err
	}
	children := req["children"].(map[string]any)
	count := 0
	for _, objs := range children {
		count += len(objs.(map[string]any))
	}
	template := func(typ string) map[string]any {
		for _, o := range children[typ].(map[string]any) {
			return o.(map[string]any)
		}
		return nil
	}
	job, secret, configMap := template("Job.batch/v1"), template("Secret.v1"), template("ConfigMap.v1")
	if job == nil || secret == nil || configMap == nil {
		return nil, fmt.Errorf("the request lacks a Job, a Secret or a ConfigMap to copy")
	}
	add := func(typ string, tmpl map[string]any, name string) error {
		o, err := renamedCopy(tmpl, name, count)
		if err != nil {
			return err
		}
		children[typ].(map[string]any)[name] = o
		count++
		return nil
	}
	// About two thirds Jobs, the rest Secrets and ConfigMaps in turn.
	jobs := (total - count) * 2 / 3
	for i := 0; i < jobs; i++ {
		if err := add("Job.batch/v1", job, fmt.Sprintf("monocle-sample-update-idents-%010x", 0xa000000000+i)); err != nil {
			return nil, err
		}
	}
	for i := 0; count < total; i++ {
		typ, tmpl := "Secret.v1", secret
		if i%2 == 1 {
			typ, tmpl = "ConfigMap.v1", configMap
		}
		if err := add(typ, tmpl, fmt.Sprintf("monocle-sample-extra-%03d", i)); err != nil {
			return nil, err
		}
	}
	if invalidSpec {
		req["parent"].(map[string]any)["spec"].(map[string]any)["storageSize"] = "a lot"
	}
	return json.Marshal(req)
}

// Named is a request body and the name a benchmark runs it under.
type Named struct {
	Name string
	Body []byte
}

// Bench are the bodies every benchmark of the hook and its server runs on,
// in a fixed order: each recorded sync request in dir (the customize ones
// left out), then "large-100-children" (the all-ready request grown to 100
// children, WithChildren) and "large-100-children-invalid-spec".
func Bench(dir string) ([]Named, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no recorded requests in %s: %v", dir, err)
	}
	var out []Named
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); !strings.HasPrefix(name, "customize") {
			body, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, Named{name, body})
		}
	}
	allReady, err := os.ReadFile(filepath.Join(dir, "sync-v1-all-ready-job-complete.json"))
	if err != nil {
		return nil, err
	}
	for _, invalid := range []bool{false, true} {
		body, err := WithChildren(allReady, 100, invalid)
		if err != nil {
			return nil, err
		}
		name := "large-100-children"
		if invalid {
			name += "-invalid-spec"
		}
		out = append(out, Named{name, body})
	}
	return out, nil
}

// renamedCopy is a deep copy of the child tmpl named name, in its last-applied
// annotation too, with the uid numbered i.
func renamedCopy(tmpl map[string]any, name string, i int) (map[string]any, error) {
	const lastApplied = "metacontroller.k8s.io/last-applied-configuration"
	var o map[string]any
	b, _ := json.Marshal(tmpl)
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, err
	}
	md := o["metadata"].(map[string]any)
	md["name"] = name
	md["uid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	if ann, ok := md["annotations"].(map[string]any); ok {
		if la, ok := ann[lastApplied].(string); ok {
			var applied map[string]any
			if err := json.Unmarshal([]byte(la), &applied); err != nil {
				return nil, err
			}
			applied["metadata"].(map[string]any)["name"] = name
			enc, _ := json.Marshal(applied)
			ann[lastApplied] = string(enc)
		}
	}
	return o, nil
}
