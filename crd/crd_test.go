package crd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type schema struct {
	Type                  string             `json:"type"`
	Description           string             `json:"description"`
	Properties            map[string]*schema `json:"properties"`
	Items                 *schema            `json:"items"`
	AdditionalProperties  *schema            `json:"additionalProperties"`
	PreserveUnknownFields bool               `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString           bool               `json:"x-kubernetes-int-or-string"`
}

func load(t *testing.T) *schema {
	t.Helper()
	b, err := os.ReadFile("monocle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema *schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// kubectl explain reads well: every field but apiVersion/kind/metadata's
// own has a description.
func TestEveryFieldIsDescribed(t *testing.T) {
	var missing []string
	fields := 0
	var walk func(path string, s *schema)
	walk = func(path string, s *schema) {
		fields++
		if s.Description == "" && path != ".metadata" {
			missing = append(missing, path)
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p)
		}
		if s.Items != nil {
			walk(path+"[]", s.Items)
		}
	}
	walk("", load(t))
	if fields < 60 {
		t.Fatalf("only %d fields read: the schema was not", fields)
	}
	for i, m := range missing {
		if m == "" {
			missing[i] = "(root)"
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("fields without a description:\n  %s", strings.Join(missing, "\n  "))
	}
}

// The status schema covers every field the hook writes: anything else would
// be pruned by the API server, silently. The golden answers hold every
// status field the hook writes.
func TestStatusSchemaCoversTheHooksStatus(t *testing.T) {
	status := load(t).Properties["status"]
	files, _ := filepath.Glob("../hook/testdata/golden/*.json")
	if len(files) == 0 {
		t.Fatal("no golden answers")
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var answer struct{ Status any }
		if err := json.Unmarshal(b, &answer); err != nil {
			t.Fatal(err)
		}
		var walk func(path string, v any, s *schema)
		walk = func(path string, v any, s *schema) {
			if s == nil {
				t.Errorf("%s: written by the hook, not in the status schema", path)
				return
			}
			seen[path] = true
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					walk(path+"."+k, x, s.Properties[k])
				}
			case []any:
				for _, x := range v {
					walk(path+"[]", x, s.Items)
				}
			}
		}
		walk("status", answer.Status, status)
	}
	for _, want := range []string{"status.conditions[].lastTransitionTime", "status.storage.requested", "status.versions.monocle", "status.url",
		"status.snapshots.lastScheduleTime", "status.snapshots.lastSuccessfulTime", "status.snapshots.capacity"} {
		if !seen[want] {
			t.Errorf("no golden answer writes %s: the test checks less than it says", want)
		}
	}
	if status.Properties["observedGeneration"] == nil {
		t.Error("status.observedGeneration (written by Metacontroller) is not in the schema")
	}
}
