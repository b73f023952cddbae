package pods

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// makeAPIDisruptionBudget keeps one API replica of several serving through
// a node's drain. A single replica gets none: a budget could only block the
// drain, never keep the API up (nor does Elasticsearch, a single node, for
// the same reason).
func makeAPIDisruptionBudget(n instance.Names) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   wire.TypePodDisruptionBudget,
		ObjectMeta: metav1.ObjectMeta{Name: n.API, Labels: n.Labels(child.ComponentAPI)},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: n.Selector(child.ComponentAPI)},
		},
	}
}
