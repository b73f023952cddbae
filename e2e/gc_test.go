package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	for {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			break
		}
		if err != nil {
			t.Fatalf("getting dependent ConfigMap: %v", err)
		}
		if time.Since(start) > time.Minute {
			t.Fatal("dependent ConfigMap still exists a minute after its owner was deleted")
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("dependent garbage-collected %s after the owner was deleted", time.Since(start).Round(time.Millisecond))
}
