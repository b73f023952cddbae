package hook

import (
	"encoding/json"
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
		{Manager: metacontrollerManager, Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(`{
		  "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
		  "f:spec": {"f:replicas": {}, "f:selector": {},
		    "f:template": {"f:spec": {
		      "f:containers": {"k:{\"name\":\"api\"}": {".": {}, "f:name": {}, "f:image": {}, "f:command": {},
		        "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:name": {}}}}},
		      "f:finalizersLike": {"v:\"y\"": {}}
		    }}}
		}`)},
	}}
	got, ok := appliedFields(obj, observed)
	if !ok {
		t.Fatal("no applied fields")
	}
	want := `{"metadata":{"labels":{"a":"1"}},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"1"}},"template":{"spec":{"containers":[{"command":["monocle","api"],"image":"i:1","name":"api","ports":[{"containerPort":8080,"name":"http"}]}],"finalizersLike":["y"]}}}}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	// Not applied server-side by Metacontroller: none.
	obj.ManagedFields = obj.ManagedFields[:1]
	if _, ok := appliedFields(obj, observed); ok {
		t.Error("fields from another manager's update")
	}
}
