package wire

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ChildKind is one kind of child a Monocle has.
type ChildKind struct {
	metav1.TypeMeta
	// Resource names the kind in the CompositeController's childResources.
	Resource string
	// UpdateStrategy is Metacontroller's updateStrategy.method for it.
	UpdateStrategy string
}

// Key is the kind's key in a sync request's children, as Metacontroller
// writes it.
func (k ChildKind) Key() string { return k.Kind + "." + k.APIVersion }

// The TypeMeta each constructor sets.
var (
	TypeSecret      = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
	TypeConfigMap   = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	TypeService     = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
	TypeStatefulSet = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	TypeDeployment  = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	TypeJob         = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
	TypeCronJob     = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"}
	TypeIngress     = metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"}
	// TypeNetworkPolicy: who may reach Elasticsearch.
	TypeNetworkPolicy = metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}
	// TypePodDisruptionBudget: the API's replicas, under a drain.
	TypePodDisruptionBudget = metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"}
)

// ChildKinds are the kinds of child, in the order all lists them. The
// Children struct (decoded typed, for speed), observe and all, and the
// CompositeController's childResources (chart/templates/compositecontroller.yaml)
// are written by hand: kinds_test.go fails until each matches this table.
// The e2e driver reads it.
var ChildKinds = []ChildKind{
	// InPlace: edits to a Monocle (and drift) reach its children. The hook
	// never changes an immutable field, so in-place updates always apply.
	{TypeSecret, "secrets", "InPlace"},
	{TypeConfigMap, "configmaps", "InPlace"},
	{TypeService, "services", "InPlace"},
	{TypeStatefulSet, "statefulsets", "InPlace"},
	{TypeDeployment, "deployments", "InPlace"},
	// A Job's template is immutable and a Job runs once: never updated.
	{TypeJob, "jobs", "OnDelete"},
	{TypeCronJob, "cronjobs", "InPlace"},
	{TypeIngress, "ingresses", "InPlace"},
	{TypeNetworkPolicy, "networkpolicies", "InPlace"},
	{TypePodDisruptionBudget, "poddisruptionbudgets", "InPlace"},
}
