package e2e

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// The largest Monocle the CRD admits (every list and map at its bound, read
// from the CRD by testbodies.LargestSpec) is stored, answered whole and
// converges: the API server takes every child, with Metacontroller's
// last-applied copy, and the converged sync request fits the hook's body
// limit. One item more than a bound is refused by the CRD.
func TestLargestMonocleConverges(t *testing.T) {
	crd, err := os.ReadFile("../crd/monocle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "monocle-tokens"
	spec, err := testbodies.LargestSpec(crd, secret)
	if err != nil {
		t.Fatal(err)
	}
	ns := createNamespace(t, nil)
	if err := k8sClient.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: ns},
		StringData: map[string]string{"GITHUB_TOKEN": "token"}}); err != nil {
		t.Fatal(err)
	}
	for _, ssa := range []bool{false, true} {
		d := newDriver(t, ns)
		d.ssa = ssa
		name := "largest-dynamic-apply"
		if ssa {
			name = "largest-server-side-apply"
		}
		d.createMonocle(name, spec)
		d.sync(name)
		d.markReady("Deployment.apps/v1", name+"-api")
		d.converge(name)
		c := conditionOf(d.monocle(name), condition.ConditionSpecApplied)
		if c["status"] != "True" {
			t.Fatalf("%s: SpecApplied %v %v: %.300v", name, c["status"], c["reason"], c["message"])
		}
		n := 0
		for _, objs := range d.children(d.monocle(name).GetUID()) {
			n += len(objs)
		}
		if n != 14 { // with Elasticsearch's users and NetworkPolicy, the API's PodDisruptionBudget
			t.Errorf("%s: %d children, want 14", name, n)
		}
		if d.requestBytes > wire.MaxBodyBytes {
			t.Errorf("%s: the converged sync request is %d bytes, over the hook's %d", name, d.requestBytes, wire.MaxBodyBytes)
		}
		t.Logf("%s: %d children, converged sync request %d bytes (limit %d)", name, n, d.requestBytes, wire.MaxBodyBytes)
	}

	// One more toleration than the CRD's bound.
	over := map[string]any{"tolerations": append(spec["tolerations"].([]any), map[string]any{"operator": "Exists"})}
	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hook.Group + "/" + hook.Version, "kind": hook.Kind,
		"metadata": map[string]any{"name": "over", "namespace": ns}, "spec": over,
	}}
	if _, err := mustDynamic(t, cfg).Resource(monocleGVR).Namespace(ns).Create(context.Background(), m, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Error("a Monocle with one toleration over the bound: stored")
	}
}

// A Monocle stored before a bound or rule of the CRD, with a value that
// breaks it, is answered InvalidSpec and every child stays exactly as it
// is, under both apply strategies; fixing the spec applies it.
func TestSpecStoredBeforeTheBoundsHoldsChildren(t *testing.T) {
	for _, ssa := range []bool{false, true} {
		d := newDriver(t, restrictedNamespace(t))
		d.ssa = ssa
		spec := map[string]any{"nodeSelector": map[string]any{"disk": "ssd"}}
		d.createMonocle("m", spec)
		d.converge("m")
		before := d.resourceVersions("m")

		d.storedSpec = map[string]any{"nodeSelector": map[string]any{"disk": "fast ssd"}}
		d.steady("m")
		c := conditionOf(d.monocle("m"), condition.ConditionSpecApplied)
		if c["status"] != "False" || c["reason"] != condition.ReasonInvalidSpec || !strings.Contains(c["message"].(string), "spec.nodeSelector[disk]") {
			t.Errorf("ssa %v: SpecApplied %v %v %q, want False InvalidSpec naming spec.nodeSelector[disk]", ssa, c["status"], c["reason"], c["message"])
		}
		if after := d.resourceVersions("m"); !reflect.DeepEqual(before, after) {
			t.Errorf("ssa %v: children moved:\nbefore %v\nafter  %v", ssa, before, after)
		}

		d.storedSpec = map[string]any{"nodeSelector": map[string]any{"disk": "fast-ssd"}}
		d.converge("m")
		api := d.get("Deployment.apps/v1", "m-api")
		if got, _, _ := unstructured.NestedString(api.Object, "spec", "template", "spec", "nodeSelector", "disk"); got != "fast-ssd" {
			t.Errorf("ssa %v: fixed, the API's nodeSelector is %q", ssa, got)
		}
	}
}
