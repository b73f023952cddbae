package elastic

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Progressing says what the StatefulSet is on its way to, the retention of
// its volumes first; nothing when only its rollout would.
func TestProgressing(t *testing.T) {
	n := instance.For("demo")
	for _, tc := range []struct {
		name   string
		facts  Facts
		reason string
		says   string
	}{
		{"nothing under way", Facts{}, "", ""},
		{"volumes retained before removal", Facts{Retaining: "data-demo-elastic-0"}, condition.ReasonRetainingVolume, "before its StatefulSet is removed: data-demo-elastic-0"},
		{"volumes retained before recreation", Facts{Retaining: "data-demo-elastic-0", Recreating: true, Securing: "api"}, condition.ReasonRetainingVolume, "made anew with the snapshot volume"},
		{"security waits", Facts{Securing: "the API", Recreating: true}, condition.ReasonSecuringElasticsearch, "waiting for the API"},
		{"recreated", Facts{Recreating: true}, condition.ReasonRecreatingStatefulSet, "data-demo-elastic-0 is mounted again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := tc.facts.Progressing(n)
			if ok != (tc.reason != "") {
				t.Fatalf("Progressing = %+v, %v; want one: %v", c, ok, tc.reason != "")
			}
			if ok && (c.Type != condition.ConditionProgressing || c.Status != metav1.ConditionTrue || c.Reason != tc.reason || !strings.Contains(c.Message, tc.says)) {
				t.Errorf("Progressing = %+v; want True %s saying %q", c, tc.reason, tc.says)
			}
		})
	}
}

// HeldFacts' component: Elasticsearch is External when no StatefulSet runs
// beside a running API; else its StatefulSet says how it runs.
func TestHeldComponent(t *testing.T) {
	n := instance.For("demo")
	one := int32(1)
	ready := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: n.Elastic, Generation: 2},
		Spec:   appsv1.StatefulSetSpec{Replicas: &one, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "es:7"}}}}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 1, ReadyReplicas: 1}}
	api := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: n.API}}
	for _, tc := range []struct {
		name string
		obs  wire.Children
		want condition.Component
	}{
		{"nothing observed", wire.Children{}, condition.Component{Name: "elastic"}},
		{"an API alone: external", wire.Children{Deployments: map[string]*appsv1.Deployment{n.API: api}}, condition.Component{Name: "elastic", Off: "External"}},
		{"a ready StatefulSet", wire.Children{StatefulSets: map[string]*appsv1.StatefulSet{n.Elastic: ready}, Deployments: map[string]*appsv1.Deployment{n.API: api}},
			condition.Component{Name: "elastic", Observed: true, Ready: true, Image: "es:7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HeldFacts(n, tc.obs).Component; got != tc.want {
				t.Errorf("component = %+v, want %+v", got, tc.want)
			}
		})
	}
}
