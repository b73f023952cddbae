package main

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// The chart's values are documented in two places that nothing else keeps
// in step with chart/values.yaml: chart/values.schema.json (a description
// and the default of each value, for editors and `helm show values` readers)
// and values.yaml's own `# --` comments, which helm-docs turns into the
// values table of chart/README.md (`make chart-lint` checks that README.md
// is what helm-docs writes).

const (
	chartValuesFile = "chart/values.yaml"
	chartSchemaFile = "chart/values.schema.json"
)

// A chart value as the schema sees it: a leaf is a value whose schema has
// no properties of its own (a string, a list, or a free-form object such as
// podSecurityContext, whose default is the whole object); the others are
// sections (image, serviceMonitor, ...) that only group leaves.
type chartValue struct {
	path   string
	value  any            // from values.yaml; nil when values.yaml lacks it
	schema map[string]any // nil when the schema lacks it
	leaf   bool
}

// chartValues walks values.yaml and the schema's properties together: every
// key of either, in a stable order.
func chartValues(t *testing.T) []chartValue {
	t.Helper()
	b, err := os.ReadFile(chartValuesFile)
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.UnmarshalStrict(b, &values); err != nil {
		t.Fatalf("%s: %v", chartValuesFile, err)
	}
	b, err = os.ReadFile(chartSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("%s: %v", chartSchemaFile, err)
	}

	var out []chartValue
	var walk func(prefix string, values map[string]any, schema map[string]any)
	walk = func(prefix string, values map[string]any, schema map[string]any) {
		props, _ := schema["properties"].(map[string]any)
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range values {
				if !yield(k) {
					return
				}
			}
			for k := range props {
				if _, ok := values[k]; !ok && !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			v := chartValue{path: prefix + k, value: values[k]}
			v.schema, _ = props[k].(map[string]any)
			_, section := v.schema["properties"]
			v.leaf = !section
			out = append(out, v)
			if section {
				m, _ := v.value.(map[string]any)
				walk(v.path+".", m, v.schema)
			}
		}
	}
	walk("", values, schema)
	if len(out) == 0 {
		t.Fatal("no value found")
	}
	return out
}

// TestChartValuesDescribed: every value of values.yaml has a schema entry
// with a description, and so has every section of them.
func TestChartValuesDescribed(t *testing.T) {
	leaves := 0
	for _, v := range chartValues(t) {
		if v.schema == nil {
			t.Errorf("%s: in %s, not in %s", v.path, chartValuesFile, chartSchemaFile)
			continue
		}
		if d, _ := v.schema["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s: no description in %s", v.path, chartSchemaFile)
		} else if v.leaf && v.value != nil {
			leaves++
		}
	}
	t.Logf("%d values described", leaves)
}

// TestChartSchemaDefaults: the schema's default of each value is the value
// values.yaml sets (Helm does not apply a schema's defaults: values.yaml
// is the one that counts, the schema's only tells).
func TestChartSchemaDefaults(t *testing.T) {
	for _, v := range chartValues(t) {
		if v.schema == nil {
			continue // TestChartValuesDescribed reports it
		}
		d, ok := v.schema["default"]
		switch {
		case !ok && v.leaf && v.value != nil:
			t.Errorf("%s: no default in %s; values.yaml has %s", v.path, chartSchemaFile, toJSON(v.value))
		case ok && v.value == nil:
			t.Errorf("%s: default %s in %s, but no value in values.yaml", v.path, toJSON(d), chartSchemaFile)
		case ok && !reflect.DeepEqual(d, v.value):
			t.Errorf("%s: default %s in %s, but %s in values.yaml", v.path, toJSON(d), chartSchemaFile, toJSON(v.value))
		}
	}
}

// TestChartValuesCommented: every value of values.yaml has a helm-docs
// comment (`# -- ...`) on its key, or on a key above it that helm-docs
// shows as one row (resources, with its requests and limits). Without one,
// helm-docs lists the value with an empty description.
func TestChartValuesCommented(t *testing.T) {
	b, err := os.ReadFile(chartValuesFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yamlv3.MappingNode {
		t.Fatalf("%s: not a mapping", chartValuesFile)
	}
	commented := map[string]bool{}
	var walk func(prefix string, m *yamlv3.Node, above bool)
	walk = func(prefix string, m *yamlv3.Node, above bool) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			key, value := m.Content[i], m.Content[i+1]
			path := prefix + key.Value
			c := above || helmDocsComment(key.HeadComment)
			commented[path] = c
			if value.Kind == yamlv3.MappingNode {
				walk(path+".", value, c)
			}
		}
	}
	walk("", doc.Content[0], false)
	for _, v := range chartValues(t) {
		if v.leaf && v.value != nil && !commented[v.path] {
			t.Errorf("%s: no `# --` comment in %s (helm-docs would list it undescribed)", v.path, chartValuesFile)
		}
	}
}

// helmDocsComment: whether a key's head comment is one helm-docs reads as
// its description, as helm-docs does: its last group of lines that starts
// with "# --" (a line such as "# --flag" in a comment starts a group too).
func helmDocsComment(comment string) bool {
	lines := strings.Split(comment, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "# --") {
			return strings.HasPrefix(lines[i], "# -- ") && strings.TrimSpace(strings.TrimPrefix(lines[i], "# -- ")) != ""
		}
	}
	return false
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
