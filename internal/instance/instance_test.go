package instance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestElasticProxyURLRef(t *testing.T) {
	key := func(name string) corev1.EnvVar {
		return corev1.EnvVar{Name: "MONOCLE_ELASTIC_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "monocle.url"}}}
	}
	sidecar := func(name string, env ...corev1.EnvVar) corev1.Container {
		return corev1.Container{Name: name, Env: env, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}
	}
	ended := corev1.Container{Name: ElasticProxyContainer, Env: []corev1.EnvVar{key("team-elastic")}}
	for _, tc := range []struct {
		name string
		init []corev1.Container
		want string // the Secret's name; "" for nil
	}{
		{"no init container", nil, ""},
		{"the proxy as the hook runs it", []corev1.Container{sidecar(ElasticProxyContainer, key("team-elastic"))}, "team-elastic"},
		{"an init container that ends", []corev1.Container{ended}, ""},
		{"a sidecar of another name", []corev1.Container{sidecar("other", key("team-elastic"))}, ""},
		{"a value, not a key", []corev1.Container{sidecar(ElasticProxyContainer, corev1.EnvVar{Name: "MONOCLE_ELASTIC_URL", Value: "http://es:9200"})}, ""},
		{"repeated: the last is read", []corev1.Container{sidecar(ElasticProxyContainer, key("first"), key("last"))}, "last"},
		{"repeated: a value last", []corev1.Container{sidecar(ElasticProxyContainer, key("first"), corev1.EnvVar{Name: "MONOCLE_ELASTIC_URL", Value: "http://es:9200"})}, ""},
		{"after another init container", []corev1.Container{{Name: "setup"}, sidecar(ElasticProxyContainer, key("team-elastic"))}, "team-elastic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ElasticProxyURLRef(&corev1.PodSpec{InitContainers: tc.init})
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("got %+v, want nil", got)
			case tc.want != "" && (got == nil || got.Name != tc.want):
				t.Errorf("got %+v, want Secret %s", got, tc.want)
			}
		})
	}
}
