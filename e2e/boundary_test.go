package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The confused deputy, tried as a tenant would: one who may edit the
// children in its own namespace writes last-applied annotations naming
// objects of another namespace (a ConfigMap there, a privileged Deployment,
// a Secret) and of another Monocle, then makes the hook hold its children
// (a spec it refuses, a config Monocle refuses). The driver applies each
// child in the namespace the answer gives, as Metacontroller does: not one
// write may land outside the tenant's namespace, nor on the other
// Monocle's child.
func TestForgedLastAppliedStaysInItsNamespace(t *testing.T) {
	holds := map[string]map[string]any{
		"InvalidSpec":   {"elasticsearch": map[string]any{"heap": "4g", "resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}}}},
		"ConfigInvalid": {"config": "workspaces:\n  - name: my team\n"},
	}
	for _, strategy := range []string{"three-way merge", "server-side apply"} {
		for reason, spec := range holds {
			t.Run(strategy+", "+reason, func(t *testing.T) {
				tenant, victim := restrictedNamespace(t), createNamespace(t, nil)
				coredns := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "coredns"}, Data: map[string]string{"Corefile": "good"}}
				if err := k8sClient.Create(context.Background(), coredns); err != nil {
					t.Fatal(err)
				}
				d := newDriver(t, tenant)
				d.ssa = strategy == "server-side apply"
				d.createMonocle("other", map[string]any{})
				d.converge("other")
				d.createMonocle("m", map[string]any{})
				d.converge("m")
				forged := map[string]string{
					"ConfigMap": fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"coredns","namespace":%q},"data":{"Corefile":"evil"}}`, victim),
					"Deployment": fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"pwn","namespace":%q},`+
						`"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"x","image":"evil",`+
						`"securityContext":{"privileged":true},"volumeMounts":[{"name":"host","mountPath":"/host"}]}],"volumes":[{"name":"host","hostPath":{"path":"/"}}]}}}}`, victim),
					"Secret":  fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"stolen","namespace":%q},"data":{"k":"dg=="}}`, victim),
					"Service": `{"apiVersion":"v1","kind":"Service","metadata":{"name":"other-api"},"spec":{"ports":[{"port":1}],"selector":{"evil":"yes"}}}`,
				}
				// Each on the child of that kind named m-api.
				for kind, annotation := range forged {
					patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{lastApplied: annotation}}})
					if _, err := d.dyn.Resource(childTypeOf(kind).gvr).Namespace(tenant).Patch(context.Background(), "m-api", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
						t.Fatalf("annotating %s m-api: %v", kind, err)
					}
				}
				otherService := d.get("Service.v1", "other-api").GetResourceVersion()
				d.setSpec("m", spec)
				d.writes = nil
				for range 3 {
					d.sync("m")
				}
				if out := d.writesOutside(tenant); len(out) > 0 {
					t.Errorf("writes outside namespace %s: %v", tenant, out)
				}
				for _, w := range d.writes {
					if w.name == "other-api" {
						t.Errorf("a write to the other Monocle's child: %v", w)
					}
				}
				if got := d.get("Service.v1", "other-api").GetResourceVersion(); got != otherService {
					t.Errorf("the other Monocle's Service moved: resourceVersion %s, was %s", got, otherService)
				}
				got := &corev1.ConfigMap{}
				if err := k8sClient.Get(context.Background(), clientKey(victim, "coredns"), got); err != nil || got.ResourceVersion != coredns.ResourceVersion {
					t.Errorf("%s/coredns moved: %v, data %v (%v)", victim, got.ResourceVersion, got.Data, err)
				}
				for kind, name := range map[string]string{"Deployment": "pwn", "Secret": "stolen"} {
					_, err := d.dyn.Resource(childTypeOf(kind).gvr).Namespace(victim).Get(context.Background(), name, metav1.GetOptions{})
					if !apierrors.IsNotFound(err) {
						t.Errorf("%s %s/%s: %v, want not found", kind, victim, name, err)
					}
				}
				if c := conditionOf(d.monocle("m"), "SpecApplied"); c["reason"] != reason {
					t.Errorf("SpecApplied = %v, want %s", c, reason)
				}
			})
		}
	}
}

// lastApplied is Metacontroller's annotation of what it last applied.
const lastApplied = "metacontroller.k8s.io/last-applied-configuration"
