package v1alpha1

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Every field of the CRD's affinity reaches the pod's: a field the mirror
// names differently, or Kubernetes' lacks, would be dropped on the way.
func TestAffinityCoreKeepsEveryField(t *testing.T) {
	term := `{"matchExpressions":[{"key":"disk","operator":"In","values":["ssd"]}],
		"matchFields":[{"key":"metadata.name","operator":"In","values":["node-1"]}]}`
	selector := `{"matchLabels":{"app":"monocle"},"matchExpressions":[{"key":"tier","operator":"NotIn","values":["db"]}]}`
	podTerm := `{"labelSelector":` + selector + `,"namespaceSelector":` + selector + `,"namespaces":["team"],
		"topologyKey":"kubernetes.io/hostname","matchLabelKeys":["pod-template-hash"],"mismatchLabelKeys":["tenant"]}`
	podAffinity := `{"requiredDuringSchedulingIgnoredDuringExecution":[` + podTerm + `],
		"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,"podAffinityTerm":` + podTerm + `}]}`
	in := `{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[` + term + `]},
		"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":50,"preference":` + term + `}]},
		"podAffinity":` + podAffinity + `,"podAntiAffinity":` + podAffinity + `}`

	var a Affinity
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(Core[*corev1.Affinity](&a))
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, []byte(in), out) {
		t.Errorf("converted affinity differs:\n in: %s\nout: %s", in, out)
	}
	if Core[*corev1.Affinity]((*Affinity)(nil)) != nil {
		t.Error("a nil affinity converts to a non-nil one")
	}
}

// A quantity is a string or a number, as in a pod's resources.
func TestResourcesCore(t *testing.T) {
	var r ResourceRequirements
	if err := json.Unmarshal([]byte(`{"requests":{"cpu":1,"memory":"512Mi"},"limits":{"memory":"1Gi"}}`), &r); err != nil {
		t.Fatal(err)
	}
	got := Core[*corev1.ResourceRequirements](&r)
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	for name, q := range want.Requests {
		if g := got.Requests[name]; g.Cmp(q) != 0 {
			t.Errorf("requests.%s = %s, want %s", name, g.String(), q.String())
		}
	}
	for name, q := range want.Limits {
		if g := got.Limits[name]; g.Cmp(q) != 0 {
			t.Errorf("limits.%s = %s, want %s", name, g.String(), q.String())
		}
	}
	if len(got.Requests) != 2 || len(got.Limits) != 1 {
		t.Errorf("converted %v", got)
	}
	if err := json.Unmarshal([]byte(`{"requests":{"cpu":"one"}}`), &r); err == nil {
		t.Error("a quantity that is not one decoded")
	}
}

func TestTolerationsAndReferencesCore(t *testing.T) {
	in := `[{"key":"dedicated","operator":"Equal","value":"monocle","effect":"NoExecute","tolerationSeconds":30}]`
	var ts []Toleration
	if err := json.Unmarshal([]byte(in), &ts); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(Core[[]corev1.Toleration](ts))
	if !sameJSON(t, []byte(in), out) {
		t.Errorf("tolerations: %s, want %s", out, in)
	}
	refs, _ := json.Marshal(Core[[]corev1.LocalObjectReference]([]LocalObjectReference{{Name: "pull"}}))
	if string(refs) != `[{"name":"pull"}]` {
		t.Errorf("imagePullSecrets: %s", refs)
	}
	key, _ := json.Marshal(Core[*corev1.SecretKeySelector](&SecretKeySelector{Name: "es", Key: "url"}))
	if string(key) != `{"name":"es","key":"url"}` {
		t.Errorf("secretKeyRef: %s", key)
	}
	selector, _ := json.Marshal(Core[map[string]string](map[string]LabelValue{"disk": "ssd"}))
	if string(selector) != `{"disk":"ssd"}` {
		t.Errorf("nodeSelector: %s", selector)
	}
	if Core[[]corev1.Toleration]([]Toleration(nil)) != nil || Core[map[string]string](map[string]LabelValue(nil)) != nil || Core[*corev1.SecretKeySelector]((*SecretKeySelector)(nil)) != nil {
		t.Error("nil converts to non-nil")
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
