package hook

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// CheckObjects, given each Monocle and only the ConfigMaps and Secrets
// References names for it, reports what Check reports on every object of
// the namespaces.
func TestCheckObjectsOnlyReferences(t *testing.T) {
	data, err := os.ReadFile("testdata/check-objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// And objects no Monocle references, in a namespace of the fixture's.
	data = append(data, []byte(`
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: a}
data: {config.yaml: "workspaces: []"}
---
apiVersion: v1
kind: Secret
metadata: {name: unrelated, namespace: a}
stringData: {GITHUB_TOKEN: x}
`)...)
	want, err := Check(data, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := readObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	var cms []*corev1.ConfigMap
	var secrets []*corev1.Secret
	all := len(objs.sources)
	for _, m := range objs.monocles {
		var head struct {
			Metadata struct{ Namespace, Name string }
		}
		if err := json.Unmarshal(m, &head); err != nil {
			t.Fatal(err)
		}
		ns := head.Metadata.Namespace
		cmNames, secretNames, err := References(m)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := objs.related(ns, cmNames, secretNames)
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range rel.ConfigMaps {
			if !slices.ContainsFunc(cms, func(c *corev1.ConfigMap) bool { return c.Namespace == cm.Namespace && c.Name == cm.Name }) {
				cms = append(cms, cm)
			}
		}
		for _, s := range rel.Secrets {
			if !slices.ContainsFunc(secrets, func(c *corev1.Secret) bool { return c.Namespace == s.Namespace && c.Name == s.Name }) {
				secrets = append(secrets, s)
			}
		}
	}
	if len(cms)+len(secrets) >= all {
		t.Fatalf("the fixture has no object outside the references (%d of %d): the test proves nothing", len(cms)+len(secrets), all)
	}
	got, err := CheckObjects(objs.monocles, cms, secrets, testEnv())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CheckObjects:\n%+v\nCheck:\n%+v", got, want)
	}
}

// References names the generated objects and those the spec names, once
// each; a spec that does not decode names the generated ones.
func TestReferences(t *testing.T) {
	m := json.RawMessage(`{"apiVersion":"monocle.monocle.change-metrics.io/v1alpha1","kind":"Monocle",
		"metadata":{"name":"m","namespace":"ns"},
		"spec":{"configMapRef":{"name":"cfg"},"secretRef":{"name":"tokens"},
		"elasticsearch":{"urlSecretRef":{"name":"tokens","key":"url"}}}}`)
	cms, secrets, err := References(m)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cms, []string{"m-api", "cfg"}) || !slices.Equal(secrets, []string{"m-api", "m-elastic", "tokens"}) {
		t.Errorf("References: %v %v", cms, secrets)
	}
	cms, secrets, err = References(json.RawMessage(`{"metadata":{"name":"m"},"spec":{"configMapRef":7}}`))
	if err != nil || !slices.Equal(cms, []string{"m-api"}) || !slices.Equal(secrets, []string{"m-api", "m-elastic"}) {
		t.Errorf("a spec that does not decode: %v %v %v", cms, secrets, err)
	}
	if _, _, err := References(json.RawMessage(`[`)); err == nil {
		t.Error("broken JSON: no error")
	}
}
