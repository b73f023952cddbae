package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const (
	shippedValues   = "../../chart/files/metacontroller-values.yaml"
	dedicatedValues = "../../chart/files/metacontroller-values-dedicated.yaml"
	// What the dedicated file tells another Metacontroller's owner to set.
	otherSelector = "app.kubernetes.io/name!=monocle-hook"
)

// The shipped values run replicas only under leader election, with a
// disruption budget that lets one go at a time.
func TestShippedValuesElectALeader(t *testing.T) {
	v, err := readValues([]string{shippedValues})
	if err != nil {
		t.Fatal(err)
	}
	if v.Replicas < 2 || !slices.Contains(v.CommandArgs, "--leader-election") {
		t.Errorf("replicas %d, commandArgs %v: two replicas, one leading", v.Replicas, v.CommandArgs)
	}
	var pdb struct {
		PodDisruptionBudget struct {
			MinAvailable int `json:"minAvailable"`
		} `json:"podDisruptionBudget"`
	}
	b, err := os.ReadFile(shippedValues)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &pdb); err != nil {
		t.Fatal(err)
	}
	if m := pdb.PodDisruptionBudget.MinAvailable; m < 1 || m >= v.Replicas {
		t.Errorf("podDisruptionBudget.minAvailable %d of %d replicas: a drain must keep one and may move one", m, v.Replicas)
	}
}

// The dedicated layer keeps every shipped flag (Helm replaces the list) and
// adds a selector that takes monocle-hook's CompositeController, which the
// selector it tells other Metacontrollers to use leaves alone.
func TestDedicatedValuesSelectOurController(t *testing.T) {
	shipped, err := readValues([]string{shippedValues})
	if err != nil {
		t.Fatal(err)
	}
	layered, err := readValues([]string{shippedValues, dedicatedValues})
	if err != nil {
		t.Fatal(err)
	}
	var selector string
	rest := slices.DeleteFunc(slices.Clone(layered.CommandArgs), func(a string) bool {
		s, ok := strings.CutPrefix(a, "--target-label-selector=")
		if ok {
			selector = s
		}
		return ok
	})
	if !slices.Equal(rest, shipped.CommandArgs) {
		t.Errorf("dedicated commandArgs without the selector:\n%v\nshipped:\n%v", rest, shipped.CommandArgs)
	}
	if layered.Replicas != shipped.Replicas || !slices.Equal(layered.Env, shipped.Env) {
		t.Error("the dedicated layer changed replicas or env")
	}
	ours, err := labels.Parse(selector)
	if err != nil {
		t.Fatalf("--target-label-selector=%s: %v", selector, err)
	}
	theirs, err := labels.Parse(otherSelector)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dedicatedValues)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "--target-label-selector="+otherSelector) {
		t.Errorf("%s no longer tells other Metacontrollers %s", dedicatedValues, otherSelector)
	}
	cc := compositeControllerFile(t)
	if set := labels.Set(cc.GetLabels()); !ours.Matches(set) || theirs.Matches(set) {
		t.Errorf("CompositeController labels %v: %q must take it, %q leave it", set, selector, otherSelector)
	}
}

// The dedicated ClusterRole allows what Monocle's CompositeController makes
// Metacontroller do: the converge run proves it sufficient, this that a
// child kind added to the CompositeController is added here too.
func TestDedicatedClusterRoleCoversTheController(t *testing.T) {
	v, err := readValues([]string{shippedValues, dedicatedValues})
	if err != nil {
		t.Fatal(err)
	}
	rules := v.ClusterRole.Rules
	cc := compositeControllerFile(t)
	type need struct{ group, resource string }
	needs := map[need][]string{
		{"monocle.monocle.change-metrics.io", "monocles"}:        {"get", "list", "watch", "update", "patch"},
		{"monocle.monocle.change-metrics.io", "monocles/status"}: {"update"},
		{"coordination.k8s.io", "leases"}:                        {"get", "create", "update"},
		{"", "events"}:                                           {"create", "patch"},
		{"metacontroller.k8s.io", "compositecontrollers"}:        {"list", "watch"},
	}
	children, _, _ := unstructured.NestedSlice(cc.Object, "spec", "childResources")
	for _, c := range children {
		child := c.(map[string]any)
		group, _, _ := strings.Cut(child["apiVersion"].(string), "/")
		if !strings.Contains(child["apiVersion"].(string), "/") {
			group = ""
		}
		needs[need{group, child["resource"].(string)}] = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	}
	if len(children) == 0 {
		t.Fatal("no childResources in the CompositeController")
	}
	for n, verbs := range needs {
		for _, verb := range verbs {
			if !allows(rules, n.group, n.resource, verb) {
				t.Errorf("the dedicated ClusterRole does not allow %s on %q %s", verb, n.group, n.resource)
			}
		}
	}
	for _, r := range rules {
		if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
			t.Errorf("a wildcard in the least privilege: %+v", r)
		}
	}
}

func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

func compositeControllerFile(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	cc, err := compositeController("../../metacontroller/compositecontroller.yaml", "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	return cc
}
