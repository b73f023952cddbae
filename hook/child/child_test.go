package child

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/change-metrics/monocle-hook/internal/instance"
)

func TestService(t *testing.T) {
	n := instance.For("demo")
	svc := Service(n, n.API, ComponentAPI, 8080)
	if svc.Kind != "Service" || svc.APIVersion != "v1" || svc.Name != n.API {
		t.Errorf("Service = %s %s %q; want v1 Service %q", svc.APIVersion, svc.Kind, svc.Name, n.API)
	}
	// Type and protocol are the server's defaults, left out of the answer.
	if svc.Spec.Type != "" {
		t.Errorf("type = %q; want it left to the server", svc.Spec.Type)
	}
	want := corev1.ServicePort{Name: "http", Port: 8080, TargetPort: intstr.FromString("http")}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0] != want {
		t.Errorf("ports = %+v; want [%+v]", svc.Spec.Ports, want)
	}
	for k, v := range n.Selector(ComponentAPI) {
		if svc.Spec.Selector[k] != v || svc.Labels[k] != v {
			t.Errorf("selector/labels %q = %q/%q; want %q", k, svc.Spec.Selector[k], svc.Labels[k], v)
		}
	}
	if len(svc.Spec.Selector) != len(n.Selector(ComponentAPI)) {
		t.Errorf("selector = %v; want %v", svc.Spec.Selector, n.Selector(ComponentAPI))
	}
}

func TestPodSpecScheduledAndRestricted(t *testing.T) {
	sched := Scheduling{
		NodeSelector:     map[string]string{"disk": "ssd"},
		Tolerations:      []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
		Affinity:         &corev1.Affinity{},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
	}
	pod := PodSpec(sched, corev1.Container{Name: "api", Image: "monocle"})
	if pod.NodeSelector["disk"] != "ssd" || len(pod.Tolerations) != 1 || pod.Affinity != sched.Affinity ||
		len(pod.ImagePullSecrets) != 1 || pod.ImagePullSecrets[0].Name != "pull" {
		t.Errorf("scheduling not carried: %+v", pod)
	}
	if fs := pod.SecurityContext.FSGroup; fs == nil || *fs != instance.ImageUser {
		t.Errorf("fsGroup = %v; want the image's user %d", fs, instance.ImageUser)
	}
	if len(pod.Containers) != 1 || pod.Containers[0].Image != "monocle" || pod.Containers[0].SecurityContext == nil {
		t.Errorf("containers = %+v; want the one restricted container", pod.Containers)
	}
	if empty := PodSpec(Scheduling{}, corev1.Container{}); empty.NodeSelector != nil || empty.Tolerations != nil ||
		empty.Affinity != nil || empty.ImagePullSecrets != nil {
		t.Errorf("PodSpec without scheduling = %+v; want no scheduling fields", empty)
	}
}

func TestTemplate(t *testing.T) {
	labels := map[string]string{"app": "x"}
	tpl := Template(labels, corev1.PodSpec{Hostname: "h"})
	if tpl.Labels["app"] != "x" || tpl.Spec.Hostname != "h" {
		t.Errorf("Template = %+v", tpl)
	}
}

func TestRandomKey(t *testing.T) {
	tests := []struct {
		name   string
		random []byte
		n      int
		want   string
	}{
		{name: "alphabet index", random: []byte{0, 1, 26, 61}, n: 2, want: "ab"},
		{name: "modulo wraps", random: []byte{62, 123, 0, 0}, n: 2, want: "a9"},
		// 248..255 are skipped: taking them would favour the first 8 letters.
		{name: "biased bytes skipped", random: []byte{248, 255, 1, 2, 3, 4}, n: 2, want: "bc"},
		{name: "reads again when skipped", random: []byte{250, 251, 252, 253, 7, 8, 9, 10}, n: 2, want: "hi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RandomKey(bytes.NewReader(tt.random), tt.n)
			if err != nil || string(got) != tt.want {
				t.Fatalf("RandomKey = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := RandomKey(bytes.NewReader([]byte{255, 255}), 1); err == nil {
		t.Error("RandomKey of an exhausted reader: no error")
	}
	broken := errors.New("broken")
	if _, err := RandomKey(iotest.ErrReader(broken), 4); !errors.Is(err, broken) {
		t.Errorf("RandomKey error = %v; want %v", err, broken)
	}
	key, err := RandomKey(bytes.NewReader(bytes.Repeat([]byte{200}, 64)), 32)
	if err != nil || len(key) != 32 || strings.Trim(string(key), KeyAlphabet) != "" {
		t.Errorf("RandomKey(32) = %q, %v; want 32 characters of the alphabet", key, err)
	}
}
