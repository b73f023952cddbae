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
func observe(c Children, namespace string) Children {
	return Children{
		Secrets:      byName(c.Secrets, namespace),
		ConfigMaps:   byName(c.ConfigMaps, namespace),
		Services:     byName(c.Services, namespace),
		StatefulSets: byName(c.StatefulSets, namespace),
		Deployments:  byName(c.Deployments, namespace),
		Jobs:         byName(c.Jobs, namespace),
		CronJobs:     byName(c.CronJobs, namespace),
		Ingresses:    byName(c.Ingresses, namespace),
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
		if o != nil && o.GetName() != "" && (o.GetNamespace() == "" || o.GetNamespace() == namespace) {
			out[o.GetName()] = o
		}
	}
	return out
}

// in keys the related objects of the parent's namespace by name, as
// observe does the children: the hook reads no object of another.
func (r Related) in(namespace string) Related {
	return Related{
		ConfigMaps: byName(r.ConfigMaps, namespace),
		Secrets:    byName(r.Secrets, namespace),
		Claims:     byName(r.Claims, namespace),
	}
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
