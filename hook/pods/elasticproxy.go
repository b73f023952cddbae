package pods

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// The API's sidecar `monocle-hook elastic-proxy` (internal/elasticproxy):
// Monocle's API logs its Elasticsearch URL at start (src/Monocle/Main.hs:195),
// and the built-in `view` role may read pod logs; so the API is given the
// proxy's loopback URL, and only the proxy reads the URL with the
// credentials, from the Secret's key, as the clients did (the API's
// secret-hash covers that key: a new password rolls the pod, proxy and
// all). The update-idents and janitor Jobs keep reading it: Monocle's
// janitor commands never print it (src/CLI.hs:155-190).

// proxiedElasticURL is the Secret key holding the URL, with credentials,
// that the API's proxy reads: N-elastic's for the Elasticsearch the Monocle
// runs, or urlSecretRef's; nil for a URL of the spec, which any reader of
// the Monocle reads already: the API is given it as it is.
func proxiedElasticURL(n instance.Names, given Given) *corev1.SecretKeySelector {
	switch {
	case given.ElasticURLSecret != nil:
		return given.ElasticURLSecret
	case given.ElasticURL != "":
		return nil
	}
	return elasticusers.URLEnv(n.Elastic, elasticusers.Monocle).ValueFrom.SecretKeyRef
}

// withElasticProxy runs the proxy in pod as a native sidecar (an init
// container that keeps running: it has started before the API does, and
// stops after it), reading key's URL. Its fields are few: each costs the
// hook's memory budget, twice, in every sync request of the Monocle.
func withElasticProxy(pod *corev1.PodSpec, key *corev1.SecretKeySelector, image string) {
	pod.InitContainers = append(pod.InitContainers, corev1.Container{
		Name:    instance.ElasticProxyContainer,
		Image:   image,
		Command: []string{"/monocle-hook", "elastic-proxy"},
		Env:     []corev1.EnvVar{{Name: "MONOCLE_ELASTIC_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: key}}},
		// Measured: BENCHMARKS.md, "The API's Elasticsearch proxy".
		Resources:     instance.Resources("10m", "32Mi", "64Mi"),
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			ReadOnlyRootFilesystem:   ptr.To(true),
		},
	})
}

// apiReadsElasticCredentials: the API's pods reach the Elasticsearch the
// Monocle runs with the monocle user's credentials of N-elastic: through
// the proxy, or (as 0.2.0 made them) in the API's own environment.
func apiReadsElasticCredentials(d *appsv1.Deployment, n instance.Names) bool {
	if elasticusers.ReadsURL(d.Spec.Template.Spec.Containers, n.Elastic, elasticusers.Monocle) {
		return true
	}
	ref := instance.ElasticProxyURLRef(&d.Spec.Template.Spec)
	return ref != nil && ref.Name == n.Elastic && ref.Key == elasticusers.URLKey(elasticusers.Monocle)
}
