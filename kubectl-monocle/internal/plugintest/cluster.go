package plugintest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

// FakeCluster is a dynamic client on objs (YAML documents), which knows
// the list kinds of every resource the plugin reads.
func FakeCluster(t *testing.T, docs ...string) *dynamicfake.FakeDynamicClient {
	t.Helper()
	monocleGVR := schema.GroupVersionResource{Group: hook.Group, Version: hook.Version, Resource: "monocles"}
	podGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	kinds := map[schema.GroupVersionResource]string{monocleGVR: "MonocleList", podGVR: "PodList"}
	for _, k := range wire.ChildKinds {
		gvr := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind).GroupVersion().WithResource(k.Resource)
		kinds[gvr] = k.Kind + "List"
	}
	var objs []runtime.Object
	for _, d := range docs {
		for _, doc := range strings.Split(d, "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%v\n%s", err, doc)
			}
			objs = append(objs, u)
		}
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
}
