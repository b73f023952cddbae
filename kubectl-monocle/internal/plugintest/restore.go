package plugintest

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

const (
	MonocleUID = "0b6e1f3c-2a8d-4c51-9e0f-7d3a5b2c1e90"
	JobUID     = "5f1c9a2e-7b3d-4e8a-a6c0-2d9b8e7f1a34"
	OtherUID   = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
	Restored   = "monocle-20261130-030000"
)

// RestoreMonocle is a Monocle that takes snapshots, runs a config with a
// workspace and a crawler, and carries the annotation key: value ("" none).
func RestoreMonocle(key, value string) string {
	annotations := ""
	if value != "" {
		annotations = "\n  annotations:\n    " + key + ": '" + strings.ReplaceAll(value, "'", "''") + "'"
	}
	return `apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata:
  name: m
  namespace: ns
  uid: ` + MonocleUID + `
  resourceVersion: "7"` + annotations + `
spec:
  config: |
    workspaces:
      - name: demo
        crawlers:
          - name: zuul
            update_since: "2024-01-01"
            provider: {gerrit_url: https://review.opendev.org, gerrit_repositories: [zuul/zuul]}
  api: {replicas: 0}
  crawler: {enabled: false}
  elasticsearch:
    snapshots: {schedule: "0 3 * * *", keep: 7, suspend: true}
`
}

// RestoreCluster is a fake API with RestoreMonocle carrying annotation as
// its restore record, the config ConfigMap its API mounts (as the hook
// answers it), and objs.
func RestoreCluster(t *testing.T, annotation string, objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	t.Helper()
	return ClusterWith(t, plugin.RestoreAnnotation, annotation, objs...)
}

// ClusterWith is RestoreCluster with the annotation key: value.
func ClusterWith(t *testing.T, key, value string, objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	t.Helper()
	dyn := FakeCluster(t, RestoreMonocle("", ""))
	c := &plugin.Clients{Dyn: dyn}
	m, err := plugin.ReadMonocle(context.Background(), c, "ns", "m")
	if err != nil {
		t.Fatal(err)
	}
	api, err := plugin.Answered[*appsv1.Deployment](context.Background(), c, m, elastic.DefaultHookImage, instance.For("m").API)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: api.Spec.Template.Spec.Volumes[0].ConfigMap.Name, Namespace: "ns"},
		Data:       map[string]string{instance.ConfigFile: m.Spec.Config}}
	dyn = FakeCluster(t, RestoreMonocle(key, value))
	// As the API server gives it: an integer is an int64, not YAML's float64.
	u, err := dyn.Resource(plugin.MonocleGVR).Namespace("ns").Get(context.Background(), "m", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, int64(0), "spec", "api", "replicas"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, int64(7), "spec", "elasticsearch", "snapshots", "keep"); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(plugin.MonocleGVR).Namespace("ns").Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range append([]runtime.Object{cm}, objs...) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		gvr := map[string]schema.GroupVersionResource{"ConfigMap": plugin.ConfigMapGVR, "Job": plugin.JobGVR}[gvk.Kind]
		if _, err := dyn.Resource(gvr).Namespace("ns").Create(context.Background(), &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dyn.ClearActions()
	return dyn
}

// Writes are the actions on dyn that change something.
func Writes(dyn *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range dyn.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	return out
}
