package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/internal/mcapply"
)

// A config Monocle would refuse never reaches a pod, whichever source it
// comes from: every child keeps its resourceVersion (the generated
// ConfigMap an admin edited takes the edit, nothing else), the condition
// names the path; fixing the config applies it. Under both apply strategies.
func TestRefusedConfigTouchesNothing(t *testing.T) {
	const invalid = "workspaces:\n  - name: my team\n    crawlers: []\n"
	const fixed = "workspaces:\n  - name: team\n    crawlers: []\n"
	for name, tc := range map[string]struct {
		spec map[string]any
		set  func(d *driver, config string)
	}{
		"inline": {
			spec: map[string]any{},
			set: func(d *driver, config string) {
				d.setSpec("m", map[string]any{"config": config})
			},
		},
		"own ConfigMap": {
			spec: map[string]any{"configMapRef": map[string]any{"name": "team-config"}},
			set: func(d *driver, config string) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "team-config", Namespace: d.ns}, Data: map[string]string{"config.yaml": config}}
				if err := k8sClient.Update(context.Background(), cm); err != nil {
					d.t.Fatal(err)
				}
			},
		},
		"generated ConfigMap edited by hand": {
			spec: map[string]any{},
			set: func(d *driver, config string) {
				cm := d.get("ConfigMap.v1", "m-api")
				unstructured.SetNestedField(cm.Object, config, "data", "config.yaml")
				if _, err := d.dyn.Resource(childTypeOf("ConfigMap").gvr).Namespace(d.ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
					d.t.Fatal(err)
				}
			},
		},
	} {
		for _, ssa := range []bool{false, true} {
			t.Run(name+map[bool]string{false: ", three-way merge", true: ", server-side apply"}[ssa], func(t *testing.T) {
				d := newDriver(t, restrictedNamespace(t))
				d.ssa = ssa
				if err := k8sClient.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "team-config", Namespace: d.ns},
					Data: map[string]string{"config.yaml": "workspaces:\n  - name: demo\n    crawlers: []\n"}}); err != nil {
					t.Fatal(err)
				}
				d.createMonocle("m", tc.spec)
				d.converge("m")
				d.markReady("StatefulSet.apps/v1", "m-elastic")
				d.markReady("Deployment.apps/v1", "m-api")
				d.markReady("Deployment.apps/v1", "m-crawler")
				d.converge("m")
				mount := mountedConfig(d.get("Deployment.apps/v1", "m-api"))

				tc.set(d, invalid)
				before := d.resourceVersions("m")
				for range 3 {
					d.sync("m")
				}
				after := d.resourceVersions("m")
				if name == "generated ConfigMap edited by hand" {
					// The edit is adopted as it is; only the generated
					// ConfigMap, which no pod mounts, may be written.
					delete(before, "ConfigMap.v1/m-api")
					delete(after, "ConfigMap.v1/m-api")
					if got, _, _ := unstructured.NestedString(d.get("ConfigMap.v1", "m-api").Object, "data", "config.yaml"); got != invalid {
						t.Errorf("the admin's edit became %q", got)
					}
				}
				if !maps.Equal(before, after) {
					t.Errorf("a refused config moved resourceVersions:\nbefore %v\nafter  %v", before, after)
				}
				c := conditionOf(d.monocle("m"), "SpecApplied")
				if c["reason"] != "ConfigInvalid" || !strings.Contains(c["message"].(string), `workspaces[0].name: "my team"`) {
					t.Errorf("SpecApplied %v", c)
				}

				tc.set(d, fixed)
				d.converge("m")
				if got := mountedConfig(d.get("Deployment.apps/v1", "m-api")); got == mount {
					t.Errorf("the fixed config is not mounted: still %s", got)
				}
				if c := conditionOf(d.monocle("m"), "SpecApplied"); c["status"] != "True" {
					t.Errorf("fixed: SpecApplied %v", c)
				}
			})
		}
	}
}

// A Monocle made by the hook before the config check (the API and crawler
// mounting N-api, the crawler RollingUpdate as the server defaulted it)
// moves to the checked mount and to Recreate, and the API server accepts
// every step, under both apply strategies; then it stays still.
func TestUpgradeMovesToCheckedMountAndRecreate(t *testing.T) {
	for name, ssa := range map[string]bool{"three-way merge": false, "server-side apply": true} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := newDriver(t, restrictedNamespace(t))
			d.ssa = ssa
			d.createMonocle("m", map[string]any{})
			d.converge("m")

			// What the earlier hook answered and left: its answer rewritten
			// into the Deployments, applied as Metacontroller applied it.
			for _, n := range []string{"m-api", "m-crawler"} {
				live := d.get("Deployment.apps/v1", n)
				var old map[string]any
				if ssa {
					old = live.DeepCopy().Object
					delete(old, "status")
					md := old["metadata"].(map[string]any)
					for _, f := range []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "annotations"} {
						delete(md, f)
					}
				} else {
					if err := json.Unmarshal([]byte(live.GetAnnotations()[mcapply.LastAppliedAnnotation]), &old); err != nil {
						t.Fatal(err)
					}
				}
				unstructured.SetNestedMap(old, map[string]any{"type": "RollingUpdate"}, "spec", "strategy")
				unstructured.SetNestedSlice(old, []any{map[string]any{"name": "config", "configMap": map[string]any{"name": "m-api"}}}, "spec", "template", "spec", "volumes")
				// Nor did it run the API's Elasticsearch proxy.
				unstructured.RemoveNestedField(old, "spec", "template", "spec", "initContainers")
				client := d.dyn.Resource(childTypeOf("Deployment").gvr).Namespace(d.ns)
				if ssa {
					data, _ := json.Marshal(old)
					if _, err := client.Patch(ctx, n, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "metacontroller", Force: ptr.To(true)}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				// The earlier hook's object: a full replacement (the server
				// defaults rollingUpdate again), then its annotation.
				replaced := live.DeepCopy()
				unstructured.SetNestedMap(replaced.Object, map[string]any{"type": "RollingUpdate"}, "spec", "strategy")
				unstructured.SetNestedSlice(replaced.Object, []any{map[string]any{"name": "config", "configMap": map[string]any{"name": "m-api"}}}, "spec", "template", "spec", "volumes")
				unstructured.RemoveNestedField(replaced.Object, "spec", "template", "spec", "initContainers")
				if err := mcapply.SetLastApplied(replaced.Object, old); err != nil {
					t.Fatal(err)
				}
				if _, err := client.Update(ctx, replaced, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if s, _, _ := unstructured.NestedMap(d.get("Deployment.apps/v1", "m-crawler").Object, "spec", "strategy"); s["rollingUpdate"] == nil {
				t.Fatalf("the server did not default rollingUpdate: %v", s)
			}

			d.converge("m")
			crawler := d.get("Deployment.apps/v1", "m-crawler")
			if s, _, _ := unstructured.NestedMap(crawler.Object, "spec", "strategy"); s["type"] != "Recreate" || s["rollingUpdate"] != nil {
				t.Errorf("crawler strategy %v", s)
			}
			for _, n := range []string{"m-api", "m-crawler"} {
				if got := mountedConfig(d.get("Deployment.apps/v1", n)); !strings.HasPrefix(got, "m-config-") {
					t.Errorf("%s mounts %s", n, got)
				}
			}
			if immutable, _, _ := unstructured.NestedBool(d.get("ConfigMap.v1", mountedConfig(crawler)).Object, "immutable"); !immutable {
				t.Error("the mounted ConfigMap is not immutable")
			}
		})
	}
}

// The config size bound is what the API server takes from Metacontroller's
// default apply: a config at hook.MaxConfigJSON is stored in both the
// generated and the mounted ConfigMap, last-applied annotation and all;
// 2 KiB more and the server refuses the annotation.
func TestConfigSizeBoundOnTheServer(t *testing.T) {
	base := "workspaces:\n  - name: demo\n    crawlers: []\n#"
	config := base + strings.Repeat("x", hook.MaxConfigJSON-len(base)-strings.Count(base, "\n")-2) + "\n"
	d := newDriver(t, restrictedNamespace(t))
	d.createMonocle("m", map[string]any{"config": config})
	d.converge("m")
	if c := conditionOf(d.monocle("m"), "SpecApplied"); c["status"] != "True" {
		t.Fatalf("SpecApplied %v", c)
	}
	mounted := d.get("ConfigMap.v1", mountedConfig(d.get("Deployment.apps/v1", "m-api")))
	if got, _, _ := unstructured.NestedString(mounted.Object, "data", "config.yaml"); got != config {
		t.Fatalf("mounted config of %d bytes, want %d", len(got), len(config))
	}

	over := mounted.DeepCopy()
	over.SetName("over")
	over.SetResourceVersion("")
	over.SetUID("")
	over.SetOwnerReferences(nil)
	unstructured.SetNestedField(over.Object, config+strings.Repeat("x", 2<<10), "data", "config.yaml")
	if err := mcapply.SetLastApplied(over.Object, over.Object); err != nil {
		t.Fatal(err)
	}
	_, err := d.dyn.Resource(childTypeOf("ConfigMap").gvr).Namespace(d.ns).Create(context.Background(), over, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "metadata.annotations: Too long") {
		t.Fatalf("2 KiB over the bound: %v, want the server's annotation limit", err)
	}
}
