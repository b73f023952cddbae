package wire

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// MarshalJSON writes the answer with no status in its children: a typed
// child's status is a struct, which encoding/json writes even when empty
// ({"replicas":0,...} for a StatefulSet), and the API server ignores a
// status written with the object anyway. Left in, it would fill every
// last-applied annotation and Metacontroller's cache (issue 52).
func (r SyncResponse) MarshalJSON() ([]byte, error) {
	type plain SyncResponse // without this method
	out := plain(r)
	if r.Children != nil {
		out.Children = make([]Child, len(r.Children))
		for i, c := range r.Children {
			out.Children[i] = WithoutStatus(c)
		}
	}
	return json.Marshal(out)
}

// noStatus, at a shallower depth than the embedded object's status, hides
// it from encoding/json; nil, it is left out.
type noStatus *struct{}

// WithoutStatus is a child as the answer writes it: a kind with a status,
// without it (render writes the same).
func WithoutStatus(c Child) Child {
	switch c := c.(type) {
	case *corev1.Service:
		return struct {
			*corev1.Service
			Status noStatus `json:"status,omitempty"`
		}{Service: c}
	case *appsv1.StatefulSet:
		return struct {
			*appsv1.StatefulSet
			Status noStatus `json:"status,omitempty"`
		}{StatefulSet: c}
	case *appsv1.Deployment:
		return struct {
			*appsv1.Deployment
			Status noStatus `json:"status,omitempty"`
		}{Deployment: c}
	case *batchv1.Job:
		return struct {
			*batchv1.Job
			Status noStatus `json:"status,omitempty"`
		}{Job: c}
	case *batchv1.CronJob:
		return struct {
			*batchv1.CronJob
			Status noStatus `json:"status,omitempty"`
		}{CronJob: c}
	case *networkingv1.Ingress:
		return struct {
			*networkingv1.Ingress
			Status noStatus `json:"status,omitempty"`
		}{Ingress: c}
	case *policyv1.PodDisruptionBudget:
		return struct {
			*policyv1.PodDisruptionBudget
			Status noStatus `json:"status,omitempty"`
		}{PodDisruptionBudget: c}
	}
	return c
}
