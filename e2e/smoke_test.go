package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestControlPlaneSmoke checks that the apiserver is a real one with its
// admission chain: PodSecurity rejects a privileged Pod in a restricted
// namespace, and admits a restricted one (so the rejection is for the right
// reason).
func TestControlPlaneSmoke(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	})

	privileged := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:            "main",
			Image:           "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		}}},
	}
	err := k8sClient.Create(ctx, privileged)
	if err == nil {
		t.Fatal("privileged Pod was admitted in a restricted namespace")
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Fatalf("want a Forbidden PodSecurity error, got: %v", err)
	}
	t.Logf("rejected as expected: %v", err)

	restricted := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "restricted", Namespace: ns},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "busybox",
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	if err := k8sClient.Create(ctx, restricted); err != nil {
		t.Fatalf("restricted Pod was rejected: %v", err)
	}
}

// createNamespace creates a namespace with a generated name and the given
// labels, and deletes it when the test ends. There is no namespace
// controller (unless a test starts kube-controller-manager with it), so the
// namespace may stay Terminating; names are unique, so that is harmless.
func createNamespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-", Labels: labels}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		if err := k8sClient.Delete(context.Background(), ns); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}
