package child

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/check"
	"github.com/change-metrics/monocle-hook/hook/condition"
)

// Scheduling is the spec's scheduling, for every pod of a Monocle.
type Scheduling struct {
	NodeSelector     map[string]string
	Tolerations      []corev1.Toleration
	Affinity         *corev1.Affinity
	ImagePullSecrets []corev1.LocalObjectReference
}

// ResolveScheduling reads the spec's scheduling, converted once for the
// checks and every part's pods, and checks it as the API server checks a
// pod's.
func ResolveScheduling(spec *v1alpha1.MonocleSpec) (Scheduling, condition.FieldErrors) {
	sched := Scheduling{
		NodeSelector:     v1alpha1.Core[map[string]string](spec.NodeSelector),
		Tolerations:      v1alpha1.Core[[]corev1.Toleration](spec.Tolerations),
		Affinity:         v1alpha1.Core[*corev1.Affinity](spec.Affinity),
		ImagePullSecrets: v1alpha1.Core[[]corev1.LocalObjectReference](spec.ImagePullSecrets),
	}
	return sched, condition.Refusals(slices.Concat(
		check.NodeSelector(sched.NodeSelector, field.NewPath("nodeSelector")),
		check.Tolerations(sched.Tolerations, field.NewPath("tolerations")),
		check.Affinity(sched.Affinity, field.NewPath("affinity")),
	))
}

// Scheduled is pod with the spec's scheduling.
func Scheduled(pod corev1.PodSpec, sched Scheduling) corev1.PodSpec {
	pod.NodeSelector = sched.NodeSelector
	pod.Tolerations = sched.Tolerations
	pod.Affinity = sched.Affinity
	pod.ImagePullSecrets = sched.ImagePullSecrets
	return pod
}
