package applied

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAppliedFields(t *testing.T) {
	observed := map[string]any{}
	if err := json.Unmarshal([]byte(`{
	  "apiVersion": "apps/v1", "kind": "Deployment",
	  "metadata": {"name": "m-api", "uid": "u", "labels": {"a": "1", "admin": "x"}},
	  "spec": {
	    "replicas": 1, "revisionHistoryLimit": 10,
	    "selector": {"matchLabels": {"a": "1"}},
	    "template": {"spec": {
	      "containers": [
	        {"name": "api", "image": "i:1", "imagePullPolicy": "IfNotPresent",
	         "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
	         "command": ["monocle", "api"]},
	        {"name": "sidecar", "image": "s:1"}
	      ],
	      "finalizersLike": ["x", "y"]
	    }}
	  },
	  "status": {"replicas": 1}
	}`), &observed); err != nil {
		t.Fatal(err)
	}
	obj := &metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:admin":{}}}}`)},
		{Manager: Manager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(`{
		  "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
		  "f:spec": {"f:replicas": {}, "f:selector": {},
		    "f:template": {"f:spec": {
		      "f:containers": {"k:{\"name\":\"api\"}": {".": {}, "f:name": {}, "f:image": {}, "f:command": {},
		        "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:name": {}}}}},
		      "f:finalizersLike": {"v:\"y\"": {}}
		    }}}
		}`)},
	}}
	got := appliedFields(obj, observed)
	if got == nil {
		t.Fatal("no applied fields")
	}
	want := `{"metadata":{"labels":{"a":"1"}},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"1"}},"template":{"spec":{"containers":[{"command":["monocle","api"],"image":"i:1","name":"api","ports":[{"containerPort":8080,"name":"http"}]}],"finalizersLike":["y"]}}}}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	// Not applied server-side by Metacontroller: none.
	obj.ManagedFields = obj.ManagedFields[:1]
	if appliedFields(obj, observed) != nil {
		t.Error("fields from another manager's update")
	}
}

// finalizers is an object of n finalizers and the managed-fields set that
// owns them all: the shape that once cost a pass over every key per item.
func finalizers(n int) (map[string]any, map[string]any) {
	list, set := make([]any, n), map[string]any{}
	for i := range list {
		f := fmt.Sprintf("example.com/finalizer-%d", i)
		list[i] = f
		set["v:"+strconv.Quote(f)] = map[string]any{}
	}
	return map[string]any{"metadata": map[string]any{"finalizers": list}},
		map[string]any{"f:metadata": map[string]any{"f:finalizers": set}}
}

func TestPruneToManyListItems(t *testing.T) {
	obj, set := finalizers(12000)
	got := pruneTo(obj, set).(map[string]any)["metadata"].(map[string]any)["finalizers"].([]any)
	if len(got) != 12000 || got[11999] != "example.com/finalizer-11999" {
		t.Fatalf("%d finalizers kept", len(got))
	}
	// Keyed items, and an index.
	list := []any{map[string]any{"name": "a", "x": 1.0}, map[string]any{"name": "b"}, "c"}
	keys := map[string]any{`k:{"name":"b"}`: map[string]any{}, "i:2": map[string]any{}}
	if b, _ := json.Marshal(pruneTo(list, keys)); string(b) != `[{"name":"b"},"c"]` {
		t.Errorf("got %s", b)
	}
}

// 12,000 finalizers owned by Metacontroller: linear in the items.
func BenchmarkPruneTo(b *testing.B) {
	obj, set := finalizers(12000)
	for b.Loop() {
		pruneTo(obj, set)
	}
}
