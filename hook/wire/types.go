package wire

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
)

// SyncRequest is the body Metacontroller POSTs to a CompositeController's sync
// (and finalize) hook. Only what the hook reads is decoded: the controller
// object is skipped, and the parent's spec is kept raw so that a spec of the
// wrong shape becomes a status condition rather than a failed request.
type SyncRequest struct {
	Parent     *Parent  `json:"parent"`
	Children   Children `json:"children"`
	Related    Related  `json:"related"`
	Finalizing bool     `json:"finalizing,omitempty"`
	// Size is the request's size in bytes, as it arrived (0: unknown).
	Size int `json:"-"`
}

// Parent is the Monocle object as stored.
type Parent struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       json.RawMessage   `json:"spec,omitempty"`
	Status     struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
		// ObservedGeneration is the generation Metacontroller last synced.
		ObservedGeneration int64 `json:"observedGeneration,omitempty"`
		// Versions the hook last said run (only Metacontroller writes the
		// status: no role of the chart grants monocles/status).
		Versions *v1alpha1.Versions `json:"versions,omitempty"`
	} `json:"status"`
}

// Children are the observed children by type. Hook version v1 keys each map
// by name and v2 by namespace/name; observe re-keys them by name. Typed maps
// decode fastest: one field per row of ChildKinds, in its order.
type Children struct {
	Secrets              map[string]*corev1.Secret                `json:"Secret.v1"`
	ConfigMaps           map[string]*corev1.ConfigMap             `json:"ConfigMap.v1"`
	Services             map[string]*corev1.Service               `json:"Service.v1"`
	StatefulSets         map[string]*appsv1.StatefulSet           `json:"StatefulSet.apps/v1"`
	Deployments          map[string]*appsv1.Deployment            `json:"Deployment.apps/v1"`
	Jobs                 map[string]*batchv1.Job                  `json:"Job.batch/v1"`
	CronJobs             map[string]*batchv1.CronJob              `json:"CronJob.batch/v1"`
	Ingresses            map[string]*networkingv1.Ingress         `json:"Ingress.networking.k8s.io/v1"`
	NetworkPolicies      map[string]*networkingv1.NetworkPolicy   `json:"NetworkPolicy.networking.k8s.io/v1"`
	PodDisruptionBudgets map[string]*policyv1.PodDisruptionBudget `json:"PodDisruptionBudget.policy/v1"`
}

// Related are the objects the customize hook asked for: the user-owned
// ConfigMap and Secrets the spec names, and the instance's Elasticsearch
// volumes.
type Related struct {
	ConfigMaps map[string]*corev1.ConfigMap             `json:"ConfigMap.v1"`
	Secrets    map[string]*corev1.Secret                `json:"Secret.v1"`
	Claims     map[string]*corev1.PersistentVolumeClaim `json:"PersistentVolumeClaim.v1"`
}

// CustomizeRequest is the body of Metacontroller's customize hook.
type CustomizeRequest struct {
	Parent *Parent `json:"parent"`
}

// CustomizeResponse names the related objects to send with each sync.
type CustomizeResponse struct {
	RelatedResources []RelatedRule `json:"relatedResources"`
}

// RelatedRule is Metacontroller's RelatedResourceRule as the hook answers
// it: by names in one namespace (the parent's).
type RelatedRule struct {
	APIVersion string   `json:"apiVersion"`
	Resource   string   `json:"resource"`
	Namespace  string   `json:"namespace,omitempty"`
	Names      []string `json:"names,omitempty"`
}

// SyncResponse is the hook's answer: the whole desired set of children (a
// child left out is deleted) and the parent's whole status.
type SyncResponse struct {
	Status    v1alpha1.MonocleStatus `json:"status"`
	Children  []Child                `json:"children"`
	Finalized bool                   `json:"finalized,omitempty"`
}

// Child is one desired object: a typed Kubernetes object with its TypeMeta
// set, or (when a bad spec makes the hook repeat what it answered before) a
// JSON map.
type Child any

// MaxBodyBytes bounds a sync request: far above a real one (the recorded
// requests in testdata/metacontroller, BenchmarkHTTP's large-100-children),
// and above the converged request of the largest Monocle the CRD admits
// (TestLargestMonocle); BENCHMARKS.md has their sizes.
const MaxBodyBytes = 4 << 20
