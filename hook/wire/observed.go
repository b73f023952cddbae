package wire

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Observe re-keys the observed children by object name, whatever the hook
// version keyed them by (v1: name, v2: namespace/name). Every lookup of an
// observed child goes through its result.
func Observe(c Children, namespace string) Children {
	return Children{
		Secrets:              byName(c.Secrets, namespace),
		ConfigMaps:           byName(c.ConfigMaps, namespace),
		Services:             byName(c.Services, namespace),
		StatefulSets:         byName(c.StatefulSets, namespace),
		Deployments:          byName(c.Deployments, namespace),
		Jobs:                 byName(c.Jobs, namespace),
		CronJobs:             byName(c.CronJobs, namespace),
		Ingresses:            byName(c.Ingresses, namespace),
		NetworkPolicies:      byName(c.NetworkPolicies, namespace),
		PodDisruptionBudgets: byName(c.PodDisruptionBudgets, namespace),
	}
}

// byName re-keys the observed objects of the parent's namespace by name. A
// null entry, or one without a name, is skipped: it cannot be a child. So is
// one of another namespace: Metacontroller sends none, and whatever the hook
// read from one could only be answered there, outside the Monocle (an
// object without a namespace is one Metacontroller would put in the
// parent's).
func byName[T any, P interface {
	*T
	metav1.Object
}](m map[string]P, namespace string) map[string]P {
	out := make(map[string]P, len(m))
	for _, o := range m {
		if ObservedIn(o, namespace) {
			out[o.GetName()] = o
		}
	}
	return out
}

// ObservedIn says whether Observe keeps o as a child of a parent of the
// namespace: not null, named, and of that namespace or of none.
func ObservedIn[P interface {
	comparable
	metav1.Object
}](o P, namespace string) bool {
	var null P
	return o != null && o.GetName() != "" && (o.GetNamespace() == "" || o.GetNamespace() == namespace)
}

// In keys the related objects of the parent's namespace by name, as
// Observe does the children: the hook reads no object of another.
func (r Related) In(namespace string) Related {
	return Related{
		ConfigMaps: byName(r.ConfigMaps, namespace),
		Secrets:    byName(r.Secrets, namespace),
		Claims:     byName(r.Claims, namespace),
	}
}

// Observed is an observed child and its type.
type Observed struct {
	Object metav1.Object
	Type   metav1.TypeMeta
}

// All lists every child of c (keyed by name), by type (in ChildKinds'
// order) then by name.
func (c Children) All() []Observed {
	var out []Observed
	out = appendSorted(out, TypeSecret, c.Secrets)
	out = appendSorted(out, TypeConfigMap, c.ConfigMaps)
	out = appendSorted(out, TypeService, c.Services)
	out = appendSorted(out, TypeStatefulSet, c.StatefulSets)
	out = appendSorted(out, TypeDeployment, c.Deployments)
	out = appendSorted(out, TypeJob, c.Jobs)
	out = appendSorted(out, TypeCronJob, c.CronJobs)
	out = appendSorted(out, TypeIngress, c.Ingresses)
	out = appendSorted(out, TypeNetworkPolicy, c.NetworkPolicies)
	return appendSorted(out, TypePodDisruptionBudget, c.PodDisruptionBudgets)
}

// appendSorted appends the objects of a map keyed by name, by name.
func appendSorted[P metav1.Object](out []Observed, typ metav1.TypeMeta, m map[string]P) []Observed {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, Observed{m[name], typ})
	}
	return out
}

// Has: an observed child of that type has that name.
func (c Children) Has(typ metav1.TypeMeta, name string) bool {
	switch typ {
	case TypeSecret:
		return c.Secrets[name] != nil
	case TypeConfigMap:
		return c.ConfigMaps[name] != nil
	case TypeService:
		return c.Services[name] != nil
	case TypeStatefulSet:
		return c.StatefulSets[name] != nil
	case TypeDeployment:
		return c.Deployments[name] != nil
	case TypeJob:
		return c.Jobs[name] != nil
	case TypeCronJob:
		return c.CronJobs[name] != nil
	case TypeIngress:
		return c.Ingresses[name] != nil
	case TypeNetworkPolicy:
		return c.NetworkPolicies[name] != nil
	case TypePodDisruptionBudget:
		return c.PodDisruptionBudgets[name] != nil
	}
	return false
}
