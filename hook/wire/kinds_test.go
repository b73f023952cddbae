package wire

import (
	"os"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Children stays a struct of typed maps (a generic decode is slower), so its
// fields are written by hand: field i is ChildKinds[i], keyed as
// Metacontroller keys it and holding the kind's Go type.
func TestChildrenFollowChildKinds(t *testing.T) {
	// The Go type of each kind; a kind of a new group needs its group here.
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, networkingv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	typ := reflect.TypeFor[Children]()
	for i := range max(typ.NumField(), len(ChildKinds)) {
		if i >= typ.NumField() {
			t.Errorf("ChildKinds[%d] %s: no field of Children", i, ChildKinds[i].Key())
			continue
		}
		f := typ.Field(i)
		if i >= len(ChildKinds) {
			t.Errorf("Children.%s (%s): not in ChildKinds", f.Name, f.Tag.Get("json"))
			continue
		}
		k := ChildKinds[i]
		if tag := f.Tag.Get("json"); tag != k.Key() {
			t.Errorf("Children.%s is tagged %q, ChildKinds[%d] is %q", f.Name, tag, i, k.Key())
		}
		obj, err := scheme.New(schema.FromAPIVersionAndKind(k.APIVersion, k.Kind))
		if err != nil {
			t.Errorf("ChildKinds[%d]: %v", i, err)
			continue
		}
		if want := reflect.MapOf(reflect.TypeFor[string](), reflect.TypeOf(obj)); f.Type != want {
			t.Errorf("Children.%s is a %v, want %v for %s", f.Name, f.Type, want, k.Key())
		}
	}
}

// Observe and All take every kind: one child of each, keyed as a v2 hook
// keys it, is observed by its name and listed with its kind's TypeMeta, in
// ChildKinds' order.
func TestObserveTakesEveryKind(t *testing.T) {
	var in Children
	v := reflect.ValueOf(&in).Elem()
	var objs []metav1.Object
	for i := range v.NumField() {
		m := reflect.MakeMap(v.Field(i).Type())
		o := reflect.New(m.Type().Elem().Elem())
		obj := o.Interface().(metav1.Object)
		obj.SetNamespace("ns")
		obj.SetName("child")
		m.SetMapIndex(reflect.ValueOf("ns/child"), o)
		v.Field(i).Set(m)
		objs = append(objs, obj)
	}
	obs := reflect.ValueOf(Observe(in, "ns"))
	for i := range obs.NumField() {
		if m := obs.Field(i); m.Len() != 1 || !m.MapIndex(reflect.ValueOf("child")).IsValid() {
			t.Errorf("observe leaves out %s: %v", obs.Type().Field(i).Name, m)
		}
	}
	all := Observe(in, "ns").All()
	if len(all) != len(objs) || len(all) != len(ChildKinds) {
		t.Fatalf("all lists %d children of Children's %d kinds, want one of each of ChildKinds' %d", len(all), len(objs), len(ChildKinds))
	}
	for i, c := range all {
		if c.Object != objs[i] || c.Type != ChildKinds[i].TypeMeta {
			t.Errorf("all()[%d] is a %v (%T), want the %s", i, c.Type, c.Object, ChildKinds[i].Key())
		}
	}
}

// Metacontroller syncs the kinds the CompositeController names:
// metacontroller/compositecontroller.yaml, which e2e's
// TestManifestsUpToDate keeps rendered from the chart.
func TestChildResourcesAreChildKinds(t *testing.T) {
	b, err := os.ReadFile("../../metacontroller/compositecontroller.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type childResource struct {
		APIVersion     string `json:"apiVersion"`
		Resource       string `json:"resource"`
		UpdateStrategy struct {
			Method string `json:"method"`
		} `json:"updateStrategy"`
	}
	var cc struct {
		Spec struct {
			ChildResources []childResource `json:"childResources"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &cc); err != nil {
		t.Fatal(err)
	}
	var want []childResource
	for _, k := range ChildKinds {
		r := childResource{APIVersion: k.APIVersion, Resource: k.Resource}
		r.UpdateStrategy.Method = k.UpdateStrategy
		want = append(want, r)
	}
	if got := cc.Spec.ChildResources; !reflect.DeepEqual(got, want) {
		t.Errorf("the CompositeController's childResources (chart/templates/compositecontroller.yaml, then make manifests) are\n%+v\nChildKinds are\n%+v", got, want)
	}
}
