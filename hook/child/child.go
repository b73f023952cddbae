// Package child holds what every part of a Monocle builds its children
// with: the components that label them, the Secret and the Service of a component, the
// restricted pod of a Monocle's image scheduled as the spec asks, the
// random keys of the Secrets, and an Elasticsearch URL as Monocle reads it.
package child

import (
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// The components of a Monocle, each of its children labelled with one.
const (
	ComponentElastic      = "elastic"
	ComponentAPI          = "api"
	ComponentCrawler      = "crawler"
	ComponentUpdateIdents = "update-idents"
	ComponentSnapshots    = "snapshots"
)

// Secret is an Opaque Secret (the API server's default type, left out of
// the answer) of a Monocle's component: its data, never stringData (the
// server stores only data, so a stringData answer would differ from what is
// read back, forever).
func Secret(n instance.Names, name, component string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   wire.TypeSecret,
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: n.Labels(component)},
		Data:       data,
	}
}

// Service is a ClusterIP Service of a Monocle's component, on its "http"
// port (TCP): the type and protocol are the API server's defaults, left
// out of the answer.
func Service(n instance.Names, name, component string, port int32) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   wire.TypeService,
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: n.Labels(component)},
		Spec: corev1.ServiceSpec{
			Selector: n.Selector(component),
			Ports: []corev1.ServicePort{{
				Name:       "http",
				Port:       port,
				TargetPort: intstr.FromString("http"),
			}},
		},
	}
}

// Template is a pod template of the given labels.
func Template(labels map[string]string, spec corev1.PodSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
}

// PodSpec is the restricted pod of a Monocle's image, scheduled as asked;
// its volumes belong to the image's user.
func PodSpec(sched Scheduling, c corev1.Container) corev1.PodSpec {
	pod := instance.RestrictedPod(c, instance.ImageUser)
	pod.SecurityContext.FSGroup = ptr.To(int64(instance.ImageUser))
	return Scheduled(pod, sched)
}

// KeyAlphabet is what a random key is drawn from: letters and digits.
const KeyAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// RandomKey draws n characters from KeyAlphabet without modulo bias.
func RandomKey(random io.Reader, n int) ([]byte, error) {
	key := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(key) < n {
		if _, err := io.ReadFull(random, buf); err != nil {
			return nil, err
		}
		for _, b := range buf {
			// 248 is the largest multiple of 62 below 256.
			if b < 248 && len(key) < n {
				key = append(key, KeyAlphabet[int(b)%len(KeyAlphabet)])
			}
		}
	}
	return key, nil
}
