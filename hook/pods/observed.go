package pods

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
)

// apiRuns: the API has rolled out the pods that mount config, and one at
// least is available.
func apiRuns(d *appsv1.Deployment, config string) bool {
	return condition.DeploymentReady(d) && d.Status.AvailableReplicas > 0 && mountedConfigOf(d) == config
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
