package v1alpha1

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// The conversions of core_types.go's bounded types to Kubernetes' own, for
// the pods the hook builds. nil stays nil.

// Core is the ResourceRequirements of a container.
func (r *ResourceRequirements) Core() *corev1.ResourceRequirements {
	if r == nil {
		return nil
	}
	return &corev1.ResourceRequirements{Limits: r.Limits.Core(), Requests: r.Requests.Core()}
}

// Core is the ResourceList of a container.
func (l ResourceList) Core() corev1.ResourceList {
	if l == nil {
		return nil
	}
	out := make(corev1.ResourceList, len(l))
	for name, q := range l {
		out[name] = q.Quantity
	}
	return out
}

// Core is the secretKeyRef of an environment variable.
func (s *SecretKeySelector) Core() *corev1.SecretKeySelector {
	if s == nil {
		return nil
	}
	return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: s.Key}
}

// Core is a pod's affinity. The two types share their JSON (the CRD's is
// Kubernetes' with fewer terms), so it is converted through it: a field
// added to both needs no code here.
func (a *Affinity) Core() *corev1.Affinity {
	if a == nil {
		return nil
	}
	b, err := json.Marshal(a)
	var out corev1.Affinity
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		panic("v1alpha1.Affinity does not convert to corev1.Affinity: " + err.Error())
	}
	return &out
}

// CoreTolerations are a pod's tolerations.
func CoreTolerations(ts []Toleration) []corev1.Toleration {
	return convertSlice(ts, func(t Toleration) corev1.Toleration { return corev1.Toleration(t) })
}

// CoreImagePullSecrets are a pod's imagePullSecrets.
func CoreImagePullSecrets(refs []LocalObjectReference) []corev1.LocalObjectReference {
	return convertSlice(refs, func(r LocalObjectReference) corev1.LocalObjectReference { return corev1.LocalObjectReference(r) })
}

// StringMap is a map of bounded strings as Kubernetes' plain one (labels,
// annotations, a node selector).
func StringMap[V ~string](m map[string]V) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func convertSlice[T, U any](in []T, convert func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = convert(v)
	}
	return out
}
