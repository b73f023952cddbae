package testbodies

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// schema is what Largest reads of the CRD's OpenAPI schema.
type schema struct {
	Type                 string             `json:"type"`
	Enum                 []string           `json:"enum"`
	MaxLength            *int               `json:"maxLength"`
	MaxItems             *int               `json:"maxItems"`
	MaxProperties        *int               `json:"maxProperties"`
	Maximum              *int64             `json:"maximum"`
	Properties           map[string]*schema `json:"properties"`
	Items                *schema            `json:"items"`
	AdditionalProperties *schema            `json:"additionalProperties"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string"`
	Validations          []struct {
		Rule string `json:"rule"`
	} `json:"x-kubernetes-validations"`
}

func (s *schema) rule(part string) bool {
	return slices.ContainsFunc(s.Validations, func(v struct {
		Rule string `json:"rule"`
	}) bool {
		return strings.Contains(v.Rule, part)
	})
}

// LargestSpec is the largest Monocle spec the CRD admits that the hook
// applies whole: every list at its maxItems, every map at its
// maxProperties, every string at its maxLength, read from the CRD itself
// (crdYAML: crd/monocle.yaml), so that a bound raised in the CRD raises it
// here. Free-form strings are '>', which JSON escapes to six bytes.
// Where the schema's rules tie fields together (an operator and its
// values, url or urlSecretRef, a quantity), the values are chosen in
// fixed, a table by path; a string field with a rule or pattern that
// neither this table nor the named formats cover is an error, so that the
// generator cannot silently make an invalid spec.
func LargestSpec(crdYAML []byte, secretName string) (map[string]any, error) {
	var doc struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(crdYAML, &doc); err != nil || len(doc.Spec.Versions) == 0 {
		return nil, fmt.Errorf("reading the CRD: %v", err)
	}
	g := &generator{fixed: fixedValues(secretName)}
	v, err := g.fill("spec", doc.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"])
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// resources at the CRD's 8 names each, as the API server takes them:
// extended resources with requests equal to limits.
func largestResources(memory string) map[string]any {
	list := map[string]any{"cpu": "1", "memory": memory, "ephemeral-storage": "1Gi", "hugepages-2Mi": "4Mi"}
	for i := range 4 {
		list[qualifiedName(fmt.Sprintf("r%d", i), 253-len("requests."), 63)] = "1"
	}
	return map[string]any{"requests": list, "limits": list}
}

func fixedValues(secretName string) map[string]any {
	return map[string]any{
		// Managed Elasticsearch with snapshots: the most children.
		"spec.elasticsearch.url":          omit,
		"spec.elasticsearch.urlSecretRef": omit,
		// The spec's config wins only without a ConfigMap of one's own.
		"spec.configMapRef": omit,
		"spec.secretRef":    map[string]any{"name": secretName},
		// The largest config Monocle takes whose JSON-escaped form fits
		// the CRD's bound (its quotes double).
		"spec.config": largestConfig(),
		// Monocle serves its UI at a host's root only: the longest URL is
		// all host.
		"spec.publicURL":                           "https://" + strings.Repeat("m", 2048-len("https://")),
		"spec.monoclePublicURL":                    omit,
		"spec.image":                               "quay.io/change-metrics/monocle:" + strings.Repeat("1", 512-len("quay.io/change-metrics/monocle:")),
		"spec.elasticsearch.image":                 "docker.elastic.co/elasticsearch/elasticsearch:" + strings.Repeat("7", 512-len("docker.elastic.co/elasticsearch/elasticsearch:")),
		"spec.storageSize":                         "10Gi",
		"spec.elasticsearch.storageSize":           "10Gi",
		"spec.elasticsearch.snapshots.storageSize": "10Gi",
		"spec.elasticsearch.heap":                  "1g",
		"spec.elasticsearch.resources":             largestResources("4Gi"),
		"spec.api.resources":                       largestResources("1Gi"),
		"spec.crawler.resources":                   largestResources("1Gi"),
		"spec.elasticsearch.snapshots.schedule":    "0 3 * * *",
		"spec.elasticsearch.snapshots.timeZone":    "America/Argentina/Buenos_Aires",
		"spec.elasticsearch.snapshots.suspend":     false,
		"spec.elasticsearch.deleteDataOnDelete":    false,
		"spec.crawler.enabled":                     true,
		"spec.route.host":                          omit, // ingress.host wins
		"spec.ingress.host":                        dnsName("host", 253),
		"spec.ingress.annotations":                 largestAnnotations(),
		"spec.api.replicas":                        int64(2),
		"spec.elasticsearch.snapshots.keep":        int64(1000),
		"spec.tolerations[]": map[string]any{ // with a key and a value of their longest
			"operator": "Equal", "effect": "NoExecute", "tolerationSeconds": int64(3600)},
		"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[].operator": "NotIn",
		"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference.matchExpressions[].operator":       "NotIn",
		"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchFields[].operator":      "NotIn",
		"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference.matchFields[].operator":            "NotIn",
		"spec.affinity.pod*.labelSelector.matchExpressions[].operator":                                                              "NotIn",
		"spec.affinity.pod*.namespaceSelector.matchExpressions[].operator":                                                          "NotIn",
		// A peer is selectors or an IP block: the selectors are the larger.
		"spec.networkPolicy.elasticsearchPeers[].ipBlock":                                       omit,
		"spec.networkPolicy.elasticsearchPeers[].podSelector.matchExpressions[].operator":       "NotIn",
		"spec.networkPolicy.elasticsearchPeers[].namespaceSelector.matchExpressions[].operator": "NotIn",
	}
}

// largestConfig is the largest config of Config's shape that Monocle-hook
// takes: 255 KiB once JSON-escaped, as Metacontroller stores it.
func largestConfig() string {
	const limit = 255 << 10
	for size := limit; ; size -= 4 << 10 {
		c := Config(size)
		if b, _ := json.Marshal(c); len(b) <= limit {
			return c
		}
	}
}

// omit marks a field left out.
var omit = struct{}{}

// largestAnnotations: 32 annotations of 16 KiB in all, the CRD's bounds,
// of '<' (six bytes each in the last-applied copy).
func largestAnnotations() map[string]any {
	out := map[string]any{}
	keyLen := 317
	valueLen := 16384/32 - keyLen
	for i := range 32 {
		out[qualifiedName(fmt.Sprintf("a%d", i), 253, 63)] = strings.Repeat("<", valueLen)
	}
	return out
}

type generator struct {
	fixed map[string]any
	n     int // makes every generated key and name distinct
}

func (g *generator) lookup(path string) (any, bool) {
	if v, ok := g.fixed[path]; ok {
		return v, true
	}
	for _, pod := range []string{"podAffinity", "podAntiAffinity"} {
		for _, kind := range []string{"requiredDuringSchedulingIgnoredDuringExecution[]", "preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm"} {
			prefix := "spec.affinity." + pod + "." + kind + "."
			if rest, ok := strings.CutPrefix(path, prefix); ok {
				if v, ok := g.fixed["spec.affinity.pod*."+rest]; ok {
					return v, true
				}
			}
		}
	}
	return nil, false
}

func (g *generator) fill(path string, s *schema) (any, error) {
	if v, ok := g.lookup(path); ok {
		if m, isMap := v.(map[string]any); isMap && strings.HasSuffix(path, "[]") {
			return g.fillFields(path, s, m)
		}
		return v, nil
	}
	g.n++
	switch {
	case len(s.Enum) > 0:
		return slices.MaxFunc(s.Enum, func(a, b string) int { return len(a) - len(b) }), nil
	case s.Type == "boolean":
		return true, nil
	case s.Type == "integer":
		if s.Maximum != nil {
			return *s.Maximum, nil
		}
		return int64(1), nil
	case s.Type == "string":
		return g.text(path, s)
	case s.Type == "array":
		if s.MaxItems == nil {
			return nil, fmt.Errorf("%s: no maxItems", path)
		}
		list := make([]any, *s.MaxItems)
		for i := range list {
			v, err := g.fill(path+"[]", s.Items)
			if err != nil {
				return nil, err
			}
			list[i] = v
		}
		return list, nil
	case s.AdditionalProperties != nil:
		if s.MaxProperties == nil {
			return nil, fmt.Errorf("%s: no maxProperties", path)
		}
		m := map[string]any{}
		for range *s.MaxProperties {
			g.n++
			key := qualifiedName(fmt.Sprintf("k%d", g.n), 253, 63)
			v, err := g.fill(path+"{}", s.AdditionalProperties)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		return m, nil
	case s.Type == "object":
		return g.fillFields(path, s, nil)
	}
	return nil, fmt.Errorf("%s: a schema the generator does not know", path)
}

// fillFields fills every property of an object, the fixed ones first.
func (g *generator) fillFields(path string, s *schema, fixed map[string]any) (any, error) {
	out := map[string]any{}
	for name, p := range s.Properties {
		sub := path + "." + name
		var v any
		var err error
		if f, ok := fixed[name]; ok {
			v = f
		} else {
			v, err = g.fill(sub, p)
		}
		if err != nil {
			return nil, err
		}
		if v != omit {
			out[name] = v
		}
	}
	return out, nil
}

// text is a string at its maxLength, of the shape its rules ask for.
func (g *generator) text(path string, s *schema) (string, error) {
	if s.MaxLength == nil {
		return "", fmt.Errorf("%s: no maxLength", path)
	}
	n, tag := *s.MaxLength, fmt.Sprintf("v%d", g.n)
	switch {
	case s.rule("format.qualifiedName()"):
		return qualifiedName(tag, 253, 63), nil
	case s.rule("format.labelValue()"):
		return labelValue(tag, min(n, 63)), nil
	case s.rule("format.dns1123Subdomain()"):
		return dnsName(tag, min(n, 253)), nil
	case s.rule("format.dns1123Label()"):
		return labelValue(tag, min(n, 63)), nil
	case len(s.Validations) > 0:
		return "", fmt.Errorf("%s: a rule the generator does not know: %s", path, s.Validations[0].Rule)
	}
	if strings.HasSuffix(path, ".key") && strings.Contains(path, "urlSecretRef") {
		return labelValue(tag, n), nil
	}
	return strings.Repeat(">", n), nil
}

// labelValue is n characters: tag, then 'a's, ending with a letter.
func labelValue(tag string, n int) string {
	return (tag + strings.Repeat("a", n))[:n]
}

// dnsName is a DNS subdomain of n characters: labels of 63 joined by dots.
func dnsName(tag string, n int) string {
	var b strings.Builder
	b.WriteString(labelValue(tag, min(n, 63)))
	for b.Len() < n {
		b.WriteString(".")
		b.WriteString(labelValue("d", min(n-b.Len(), 63)))
	}
	s := b.String()
	return strings.TrimRight(s, ".")
}

// qualifiedName is a label key: a DNS subdomain prefix of prefixLen and a
// name of nameLen, distinct by tag.
func qualifiedName(tag string, prefixLen, nameLen int) string {
	return dnsName(tag, prefixLen) + "/" + labelValue(tag, nameLen)
}

// LargestRequest is the sync request of the largest Monocle (LargestSpec)
// once its children have converged, as Metacontroller sends it: the parent
// with kubectl's last-applied copy of itself, every child with
// Metacontroller's, the workloads ready (so that the update-idents Job is
// there too), and its secretRef Secret as a related object. sync answers a
// request (hook.Sync through JSON, or a POST to a running hook).
func LargestRequest(crdYAML []byte, sync func(body []byte) ([]byte, error)) ([]byte, error) {
	const name, namespace, secret = "largest-monocle-of-the-crds-own-bounds", "monocle", "monocle-tokens"
	spec, err := LargestSpec(crdYAML, secret)
	if err != nil {
		return nil, err
	}
	meta := map[string]any{"name": name, "namespace": namespace}
	applied, err := json.Marshal(map[string]any{"apiVersion": "monocle.monocle.change-metrics.io/v1alpha1", "kind": "Monocle", "metadata": meta, "spec": spec})
	if err != nil {
		return nil, err
	}
	parent := map[string]any{
		"apiVersion": "monocle.monocle.change-metrics.io/v1alpha1", "kind": "Monocle",
		"metadata": map[string]any{"name": name, "namespace": namespace, "uid": "8d4c3b2a-0000-4000-8000-000000000001", "generation": 1,
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": string(applied)}},
		"spec": spec,
	}
	related := map[string]any{"Secret.v1": map[string]any{secret: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": secret, "namespace": namespace},
		"data": map[string]any{"GITHUB_TOKEN": "dG9rZW4="}}}}
	children := map[string]any{}
	var body []byte
	for range 4 {
		if body, err = json.Marshal(map[string]any{"parent": parent, "children": children, "related": related}); err != nil {
			return nil, err
		}
		answer, err := sync(body)
		if err != nil {
			return nil, err
		}
		var a struct {
			Children []map[string]any `json:"children"`
		}
		if err := json.Unmarshal(answer, &a); err != nil {
			return nil, err
		}
		next := map[string]any{}
		for _, c := range a.Children {
			if err := observed(c, namespace, "8d4c3b2a-0000-4000-8000-000000000001"); err != nil {
				return nil, err
			}
			key := c["kind"].(string) + "." + c["apiVersion"].(string)
			byName, _ := next[key].(map[string]any)
			if byName == nil {
				byName = map[string]any{}
				next[key] = byName
			}
			byName[c["metadata"].(map[string]any)["name"].(string)] = c
		}
		children = next
	}
	return body, nil
}

// observed turns an answered child into the object Metacontroller observes
// once it is created and, for a workload, ready: its last-applied copy, its
// namespace and controller-uid label, a generation and a ready status.
func observed(c map[string]any, namespace, uid string) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	md := c["metadata"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		md["annotations"] = annotations
	}
	annotations["metacontroller.k8s.io/last-applied-configuration"] = string(b)
	labels, _ := md["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		md["labels"] = labels
	}
	labels["controller-uid"] = uid
	md["namespace"], md["generation"] = namespace, 1
	switch c["kind"] {
	case "Deployment", "StatefulSet":
		n := 1.0
		if r, ok := c["spec"].(map[string]any)["replicas"].(float64); ok {
			n = r
		}
		c["status"] = map[string]any{"observedGeneration": 1, "replicas": n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n, "currentReplicas": n}
	}
	return nil
}
