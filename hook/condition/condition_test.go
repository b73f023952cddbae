package condition

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abc", 2, "ab…"},
		{"abc", 0, "…"},
		{"", 0, ""},
		{"héllo", 2, "hé…"}, // characters, not bytes
	} {
		if got := Cut(tc.in, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// A FieldError names its field under spec., shows no control character, and
// stays within MaxMessage characters (and its field within MaxQuoted) however
// long what a writer chose is.
func TestFieldErrorIsBounded(t *testing.T) {
	e := &FieldError{Reason: ReasonInvalidSpec, Field: "api.replicas", Message: "must not be negative"}
	if got, want := e.Error(), "spec.api.replicas must not be negative"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := (&FieldError{Message: "no field"}).Error(); got != "no field" {
		t.Errorf("without a field: %q", got)
	}
	long := &FieldError{Field: strings.Repeat("f", 1000), Message: strings.Repeat("\x1b", 10*MaxMessage)}
	got := long.Error()
	if n := utf8.RuneCountInString(got); n > MaxMessage+1 {
		t.Errorf("Error() is %d characters, over %d", n, MaxMessage+1)
	}
	if strings.ContainsRune(got, '\x1b') {
		t.Errorf("Error() shows a raw ESC: %q", got[:40])
	}
	if !strings.HasPrefix(got, "spec."+strings.Repeat("f", MaxQuoted)+"… ") {
		t.Errorf("the field is not cut to %d characters: %q", MaxQuoted, got[:300])
	}
}

func TestTransitionTimeHoldsWhileStatusHolds(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := func() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 500, time.UTC) }
	current := []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue, LastTransitionTime: then}}
	if got := TransitionTime(current, metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue}, now); !got.Equal(&then) {
		t.Errorf("same status: %v, want the old %v", got, then)
	}
	want := metav1.NewTime(now().Truncate(time.Second))
	if got := TransitionTime(current, metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse}, now); !got.Equal(&want) {
		t.Errorf("new status: %v, want now %v", got, want)
	}
}

func TestDeploymentReady(t *testing.T) {
	d := func(gen, observed int64, replicas *int32, updated, available int32) *appsv1.Deployment {
		x := &appsv1.Deployment{}
		x.Generation, x.Status.ObservedGeneration, x.Spec.Replicas = gen, observed, replicas
		x.Status.UpdatedReplicas, x.Status.AvailableReplicas = updated, available
		return x
	}
	for name, tc := range map[string]struct {
		d    *appsv1.Deployment
		want bool
	}{
		"none":                 {nil, false},
		"rolled out":           {d(2, 2, ptr.To[int32](2), 2, 2), true},
		"default one replica":  {d(1, 1, nil, 1, 1), true},
		"generation not seen":  {d(3, 2, ptr.To[int32](1), 1, 1), false},
		"one replica not yet":  {d(1, 1, ptr.To[int32](2), 2, 1), false},
		"old replicas serving": {d(1, 1, ptr.To[int32](2), 1, 2), false},
	} {
		if got := DeploymentReady(tc.d); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// A workload's component: observed, ready by its rollout, its first
// container's image.
func TestWorkloadComponents(t *testing.T) {
	one := int32(1)
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "first"}, {Image: "second"}}}}
	rolledOut := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.DeploymentSpec{Replicas: &one, Template: pod},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, UpdatedReplicas: 1, AvailableReplicas: 1}}
	rolling := rolledOut.DeepCopy()
	rolling.Generation = 4
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.StatefulSetSpec{Replicas: &one, Template: pod},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, UpdatedReplicas: 1, ReadyReplicas: 0}}
	for _, tc := range []struct {
		name      string
		got, want Component
	}{
		{"no Deployment", DeploymentComponent("api", nil), Component{Name: "api"}},
		{"a Deployment rolled out", DeploymentComponent("api", rolledOut), Component{Name: "api", Observed: true, Ready: true, Image: "first"}},
		{"a Deployment rolling out", DeploymentComponent("api", rolling), Component{Name: "api", Observed: true, Image: "first"}},
		{"no StatefulSet", StatefulSetComponent("elastic", nil), Component{Name: "elastic"}},
		{"a StatefulSet not ready", StatefulSetComponent("elastic", sts), Component{Name: "elastic", Observed: true, Image: "first"}},
		{"no container", DeploymentComponent("api", &appsv1.Deployment{}), Component{Name: "api", Observed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("component = %+v, want %+v", tc.got, tc.want)
			}
		})
	}
}
