package hook

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// observe re-keys the observed children by object name, whatever the hook
// version keyed them by (v1: name, v2: namespace/name). Every lookup of an
// observed child goes through its result.
func observe(c Children) Children {
	return Children{
		Secrets:      byName(c.Secrets),
		ConfigMaps:   byName(c.ConfigMaps),
		Services:     byName(c.Services),
		StatefulSets: byName(c.StatefulSets),
		Deployments:  byName(c.Deployments),
		Jobs:         byName(c.Jobs),
		CronJobs:     byName(c.CronJobs),
		Ingresses:    byName(c.Ingresses),
	}
}

// byName re-keys an observed child map by object name. A null entry, or one
// without a name, is skipped: it cannot be a child.
func byName[T any, P interface {
	*T
	metav1.Object
}](m map[string]P) map[string]P {
	out := make(map[string]P, len(m))
	for _, o := range m {
		if o != nil && o.GetName() != "" {
			out[o.GetName()] = o
		}
	}
	return out
}

// observedChild is an observed child and its type.
type observedChild struct {
	obj metav1.Object
	typ metav1.TypeMeta
}

// all lists every child of c (keyed by name), by type (in ChildKinds'
// order) then by name.
func (c Children) all() []observedChild {
	var out []observedChild
	out = appendSorted(out, typeSecret, c.Secrets)
	out = appendSorted(out, typeConfigMap, c.ConfigMaps)
	out = appendSorted(out, typeService, c.Services)
	out = appendSorted(out, typeStatefulSet, c.StatefulSets)
	out = appendSorted(out, typeDeployment, c.Deployments)
	out = appendSorted(out, typeJob, c.Jobs)
	out = appendSorted(out, typeCronJob, c.CronJobs)
	return appendSorted(out, typeIngress, c.Ingresses)
}

// appendSorted appends the objects of a map keyed by name, by name.
func appendSorted[P metav1.Object](out []observedChild, typ metav1.TypeMeta, m map[string]P) []observedChild {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, observedChild{m[name], typ})
	}
	return out
}

// apiRuns: the API has rolled out the pods that mount config, and one at
// least is available.
func apiRuns(d *appsv1.Deployment, config string) bool {
	return deploymentReady(d) && d.Status.AvailableReplicas > 0 && mountedConfigOf(d) == config
}

// mountedConfigOf is the ConfigMap a Monocle workload mounts.
func mountedConfigOf(d *appsv1.Deployment) string {
	return volumeConfigMap(d.Spec.Template.Spec.Volumes)
}

// volumeConfigMap is the ConfigMap of the "config" volume.
func volumeConfigMap(volumes []corev1.Volume) string {
	for _, v := range volumes {
		if v.Name == "config" && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

// observedPublicURL is the public URL the API runs with.
func observedPublicURL(d *appsv1.Deployment) string {
	if d == nil {
		return ""
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "MONOCLE_PUBLIC_URL" {
				return e.Value
			}
		}
	}
	return ""
}
