package crd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook"
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

// The CRD's spec and hook.Spec, the Go type the hook decodes it into, name
// the same fields with the same types and nesting, both ways: a field added
// to one side only fails here. Where the Go side is a Kubernetes type
// (resources, affinity, a secretKeyRef, ...) the comparison stops at that
// node: the CRD copies those schemas, and the API server validates them.
func TestSpecSchemaMatchesSpec(t *testing.T) {
	var drift []string
	var compare func(path string, typ reflect.Type, s *schema)
	compare = func(path string, typ reflect.Type, s *schema) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		want := map[reflect.Kind]string{reflect.String: "string", reflect.Bool: "boolean", reflect.Int32: "integer",
			reflect.Int64: "integer", reflect.Struct: "object", reflect.Map: "object", reflect.Slice: "array"}[typ.Kind()]
		if s.Type != want {
			drift = append(drift, fmt.Sprintf("%s: CRD type %q, Go %s (%q)", path, s.Type, typ, want))
			return
		}
		if strings.HasPrefix(typ.PkgPath(), "k8s.io/") || s.PreserveUnknownFields {
			return
		}
		switch typ.Kind() {
		case reflect.Slice:
			if s.Items == nil {
				drift = append(drift, path+": CRD array without items")
				return
			}
			compare(path+"[]", typ.Elem(), s.Items)
		case reflect.Map:
			if s.AdditionalProperties == nil {
				drift = append(drift, path+": CRD object without additionalProperties for a Go map")
				return
			}
			compare(path+"{}", typ.Elem(), s.AdditionalProperties)
		case reflect.Struct:
			goFields := map[string]reflect.Type{}
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "" || name == "-" {
					drift = append(drift, fmt.Sprintf("%s: Go field %s has no JSON name", path, f.Name))
					continue
				}
				goFields[name] = f.Type
			}
			for name, ft := range goFields {
				if p := s.Properties[name]; p == nil {
					drift = append(drift, path+"."+name+": in hook.Spec, not in the CRD")
				} else {
					compare(path+"."+name, ft, p)
				}
			}
			for name := range s.Properties {
				if goFields[name] == nil {
					drift = append(drift, path+"."+name+": in the CRD, not in hook.Spec")
				}
			}
		}
	}
	compare("spec", reflect.TypeFor[hook.Spec](), load(t).Properties["spec"])
	if len(drift) > 0 {
		sort.Strings(drift)
		t.Errorf("the CRD and hook.Spec disagree:\n  %s", strings.Join(drift, "\n  "))
	}
}
