package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestGarbageCollector checks startControllerManager: with the garbage
// collector running, deleting an owner deletes its dependents.
func TestGarbageCollector(t *testing.T) {
	startControllerManager(t, "garbagecollector")
	ctx := context.Background()
	ns := createNamespace(t, nil)

	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := k8sClient.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:      "dependent",
		Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}
	if err := k8sClient.Create(ctx, dependent); err != nil {
		t.Fatal(err)
	}
	// Background propagation, the default: the owner goes at once and the
	// garbage collector deletes the dependent afterwards.
	if err := k8sClient.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("dependent ConfigMap not garbage-collected: %v", err)
	}
	t.Logf("dependent garbage-collected %s after the owner was deleted", time.Since(start).Round(time.Millisecond))
}
