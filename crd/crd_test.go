package crd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	Enum                  []any              `json:"enum"`
	MaxLength             *int               `json:"maxLength"`
	MaxItems              *int               `json:"maxItems"`
	MaxProperties         *int               `json:"maxProperties"`
	Validations           []struct {
		Rule string `json:"rule"`
	} `json:"x-kubernetes-validations"`
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
		// A list of strings is described by its list: controller-gen
		// writes no description for its items.
		scalarItem := strings.HasSuffix(path, "[]") && s.Type != "object"
		if s.Description == "" && path != ".metadata" && !scalarItem {
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

// kubectl explain wraps a description to the terminal: one written as
// paragraphs reads well, one hard-wrapped in its Go comment is cut
// mid-sentence. So the descriptions of the spec and of the status (but of
// conditions, apimachinery's own) are paragraphs: no line break but
// between two.
func TestDescriptionsAreParagraphs(t *testing.T) {
	var wrapped []string
	var walk func(path string, s *schema)
	walk = func(path string, s *schema) {
		if strings.Contains(strings.ReplaceAll(s.Description, "\n\n", ""), "\n") && !strings.HasPrefix(path, ".status.conditions") {
			wrapped = append(wrapped, path)
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p)
		}
		if s.Items != nil {
			walk(path+"[]", s.Items)
		}
	}
	root := load(t)
	walk("", &schema{Description: root.Description})
	for _, part := range []string{"spec", "status"} {
		walk("."+part, root.Properties[part])
	}
	sort.Strings(wrapped)
	if len(wrapped) > 0 {
		t.Errorf("descriptions hard-wrapped (write each paragraph of the Go comment on one line):\n  %s", strings.Join(wrapped, "\n  "))
	}
}

// Every field a Monocle's writer sets is bounded, so that one hook serves
// every Monocle: strings by maxLength (or an enum), lists by maxItems, maps
// by maxProperties and a CEL rule on their keys' length; nothing is kept
// unknown.
func TestEveryFieldIsBounded(t *testing.T) {
	var unbounded []string
	var walk func(path string, s *schema)
	walk = func(path string, s *schema) {
		switch {
		case s.PreserveUnknownFields:
			unbounded = append(unbounded, path+": x-kubernetes-preserve-unknown-fields")
		case s.Type == "string" && s.MaxLength == nil && s.Enum == nil:
			unbounded = append(unbounded, path+": a string without maxLength")
		case s.Type == "array" && s.MaxItems == nil:
			unbounded = append(unbounded, path+": a list without maxItems")
		case s.AdditionalProperties != nil && s.MaxProperties == nil:
			unbounded = append(unbounded, path+": a map without maxProperties")
		case s.AdditionalProperties != nil && !slices.ContainsFunc(s.Validations, func(v struct {
			Rule string `json:"rule"`
		}) bool {
			return strings.Contains(v.Rule, "k.size() <=")
		}):
			unbounded = append(unbounded, path+": a map without a rule bounding its keys' length")
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p)
		}
		if s.Items != nil {
			walk(path+"[]", s.Items)
		}
		if s.AdditionalProperties != nil && !s.IntOrString {
			walk(path+"{}", s.AdditionalProperties)
		}
	}
	walk("spec", load(t).Properties["spec"])
	if len(unbounded) > 0 {
		sort.Strings(unbounded)
		t.Errorf("unbounded:\n  %s", strings.Join(unbounded, "\n  "))
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

// crd/monocle.yaml is what controller-gen writes from api/v1alpha1, the
// types the hook decodes a Monocle into: `make manifests` after an edit of
// either keeps them one.
func TestGeneratedFromTypes(t *testing.T) {
	cmd := exec.Command("go", "tool", "-modfile=tools/controller-gen/go.mod", "controller-gen", "crd", "paths=./api/...", "output:crd:stdout")
	cmd.Dir = ".."
	// Built as the Makefile builds (static), also under `make unit`'s race
	// run (which needs cgo): its packages are then those lint built.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	got, err := os.ReadFile("monocle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("crd/monocle.yaml is not what controller-gen writes from api/v1alpha1: run make manifests")
	}
}
