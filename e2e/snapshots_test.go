package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Turning snapshots on for an existing Monocle, with the StatefulSet
// controller and the garbage collector of a real kube-controller-manager:
// the hook recreates Elasticsearch's StatefulSet (Retain first when it was
// set to delete its volumes), no PVC is deleted, the new pod mounts the same
// data claim, the CronJob is admitted in a restricted namespace with no
// warning, and the Monocle is a fixed point again within a few syncs, under
// both of Metacontroller's apply strategies. Deleting the Monocle then keeps
// the snapshot volume, unless deleteDataOnDelete.
func TestSnapshotsOnForAnExistingMonocle(t *testing.T) {
	startControllerManager(t, "garbagecollector", "statefulset")
	for name, mode := range map[string]struct{ ssa, deleteData bool }{
		"three-way merge":                       {false, false},
		"server-side apply":                     {true, false},
		"three-way merge, deleteDataOnDelete":   {false, true},
		"server-side apply, deleteDataOnDelete": {true, true},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := restrictedNamespace(t)
			d, warnings := newWarningDriver(t, ns)
			d.ssa = mode.ssa
			elastic := map[string]any{"storageSize": "1Gi", "deleteDataOnDelete": mode.deleteData}
			d.createMonocle("m", map[string]any{"elasticsearch": elastic})
			converge(t, d, ns)
			data := waitClaim(t, ns, "data-m-elastic-0")
			oldSTS := d.get("StatefulSet.apps/v1", "m-elastic").GetUID()
			if got := len(data.OwnerReferences); mode.deleteData != (got == 1) {
				t.Fatalf("data claim owners %v (deleteDataOnDelete %v)", data.OwnerReferences, mode.deleteData)
			}
			claimsBefore := claimUIDs(t, ns)

			// Snapshots on.
			elastic["snapshots"] = map[string]any{"schedule": "0 3 * * *", "keep": int64(7)}
			d.setSpec("m", map[string]any{"elasticsearch": elastic})
			var steps []string
			for i := 1; ; i++ {
				r := d.sync("m")
				progressing := conditionOf(d.monocle("m"), "Progressing")
				steps = append(steps, strings.Join(slices.Concat(prefixed("created ", r.created), prefixed("updated ", r.updated), prefixed("deleted ", r.deleted),
					[]string{"Progressing " + progressing["reason"].(string)}), ", "))
				if !r.changed() {
					break
				}
				if i == 5 {
					t.Fatalf("no convergence in 5 syncs: %q", steps)
				}
				settle(t, d, ns)
			}
			t.Logf("syncs: %q", steps)
			want := []string{
				"deleted StatefulSet.apps/v1/m-elastic, Progressing RecreatingStatefulSet",
				"created CronJob.batch/v1/m-snapshots, created StatefulSet.apps/v1/m-elastic, Progressing RollingOut",
				"Progressing RollingOut",
			}
			if mode.deleteData {
				want = slices.Insert(want, 0, "updated StatefulSet.apps/v1/m-elastic, Progressing RetainingVolume")
			}
			if !slices.Equal(steps, want) {
				t.Errorf("syncs %q, want %q", steps, want)
			}
			settle(t, d, ns)
			d.steady("m")

			// No claim was deleted; the new pod mounts the same data claim
			// and the new snapshot one.
			for name, uid := range claimsBefore {
				pvc := &corev1.PersistentVolumeClaim{}
				if err := k8sClient.Get(ctx, clientKey(ns, name), pvc); err != nil || pvc.UID != uid || pvc.DeletionTimestamp != nil {
					t.Errorf("claim %s: %v, uid %s (was %s), deleted at %v", name, err, pvc.UID, uid, pvc.DeletionTimestamp)
				}
			}
			sts := &appsv1.StatefulSet{}
			if err := k8sClient.Get(ctx, clientKey(ns, "m-elastic"), sts); err != nil || sts.UID == oldSTS {
				t.Fatalf("StatefulSet %v, uid %s (was %s)", err, sts.UID, oldSTS)
			}
			pod := waitPod(t, ns, "m-elastic-0", sts.UID)
			mounts := map[string]string{}
			for _, v := range pod.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					mounts[v.Name] = v.PersistentVolumeClaim.ClaimName
				}
			}
			if mounts["data"] != "data-m-elastic-0" || mounts["snapshots"] != "snapshots-m-elastic-0" {
				t.Errorf("pod claims %v", mounts)
			}
			if env := pod.Spec.Containers[0].Env; !slices.Contains(env, corev1.EnvVar{Name: "path.repo", Value: "/usr/share/elasticsearch/snapshots"}) {
				t.Errorf("Elasticsearch env %v", env)
			}
			if snapshots := waitClaim(t, ns, "snapshots-m-elastic-0"); !mode.deleteData && len(snapshots.OwnerReferences) > 0 {
				t.Errorf("snapshot claim owners %v under Retain", snapshots.OwnerReferences)
			}
			if data := waitClaim(t, ns, "data-m-elastic-0"); data.UID != claimsBefore["data-m-elastic-0"] {
				t.Errorf("data claim uid %s, was %s", data.UID, claimsBefore["data-m-elastic-0"])
			}

			// The CronJob, as the API server stored it, admitted with no warning.
			cj := &batchv1.CronJob{}
			if err := k8sClient.Get(ctx, clientKey(ns, "m-snapshots"), cj); err != nil {
				t.Fatal(err)
			}
			if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent || cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image != e2eHookImage {
				t.Errorf("CronJob %+v", cj.Spec)
			}
			if len(warnings.messages) > 0 {
				t.Errorf("warnings: %v", warnings.messages)
			}
			m := d.monocle("m")
			if c := conditionOf(m, "SnapshotsHealthy"); c["status"] != "Unknown" || c["reason"] != "NoRunDueYet" {
				t.Errorf("SnapshotsHealthy %v", c)
			}
			if c := conditionOf(m, "SpecApplied"); c["status"] != "True" {
				t.Errorf("SpecApplied %v", c)
			}

			// The Monocle deleted: the garbage collector takes its children;
			// the snapshot volume stays, unless deleteDataOnDelete.
			if err := d.dyn.Resource(monocleGVR).Namespace(ns).Delete(ctx, "m", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
				t.Fatal(err)
			}
			waitGone(t, &appsv1.StatefulSet{}, ns, "m-elastic")
			waitGone(t, &batchv1.CronJob{}, ns, "m-snapshots")
			for _, name := range []string{"snapshots-m-elastic-0", "data-m-elastic-0"} {
				pvc := &corev1.PersistentVolumeClaim{}
				if !mode.deleteData {
					// The garbage collector has had its turn at the StatefulSet.
					if err := k8sClient.Get(ctx, clientKey(ns, name), pvc); err != nil || pvc.DeletionTimestamp != nil || len(pvc.OwnerReferences) > 0 {
						t.Errorf("claim %s after the Monocle's deletion: %v, deleted at %v, owners %v", name, err, pvc.DeletionTimestamp, pvc.OwnerReferences)
					}
					continue
				}
				// Deleted (held Terminating by the pvc-protection finalizer,
				// whose controller does not run here).
				waitFor(t, "claim "+name+" deleted", func() bool {
					err := k8sClient.Get(ctx, clientKey(ns, name), pvc)
					return apierrors.IsNotFound(err) || err == nil && pvc.DeletionTimestamp != nil
				})
			}
		})
	}
}

// A new Monocle with snapshots converges in a restricted namespace with no
// warning, and so does turning them off: the CronJob goes, Elasticsearch's
// StatefulSet stays as it is (its templates cannot change; no restart).
func TestSnapshotsOnAndOff(t *testing.T) {
	ns := restrictedNamespace(t)
	d, warnings := newWarningDriver(t, ns)
	spec := map[string]any{"elasticsearch": map[string]any{"snapshots": map[string]any{
		"schedule": "@every 12h", "keep": int64(3), "timeZone": "Europe/Paris", "storageSize": "2Gi"}}}
	d.createMonocle("m", spec)
	d.converge("m")
	if len(warnings.messages) > 0 {
		t.Errorf("warnings: %v", warnings.messages)
	}
	sts := d.get("StatefulSet.apps/v1", "m-elastic").GetResourceVersion()
	d.get("CronJob.batch/v1", "m-snapshots")

	d.setSpec("m", map[string]any{})
	d.converge("m")
	if got := d.children(d.monocle("m").GetUID())["CronJob.batch/v1"]; len(got) > 0 {
		t.Errorf("CronJobs %v after snapshots were turned off", got)
	}
	if got := d.get("StatefulSet.apps/v1", "m-elastic").GetResourceVersion(); got != sts {
		t.Error("turning snapshots off touched the StatefulSet")
	}
	if c := conditionOf(d.monocle("m"), "SnapshotsHealthy"); c["reason"] != "SnapshotsOff" {
		t.Errorf("SnapshotsHealthy %v", c)
	}
}

// converge syncs a new Monocle until it changes nothing, lets the
// StatefulSet controller settle, then checks it is a fixed point.
func converge(t *testing.T, d *driver, ns string) {
	t.Helper()
	for i := 1; d.sync("m").changed(); i++ {
		if i == 3 {
			t.Fatal("no convergence in 3 syncs")
		}
	}
	settle(t, d, ns)
	d.steady("m")
}

// settle waits until the StatefulSet controller has seen the StatefulSet's
// spec and made its pod (Pending: nothing schedules it), so that it writes
// no more status while the driver checks resourceVersions.
func settle(t *testing.T, d *driver, ns string) {
	t.Helper()
	waitFor(t, "the StatefulSet controller to settle", func() bool {
		sts := &appsv1.StatefulSet{}
		err := k8sClient.Get(context.Background(), clientKey(ns, "m-elastic"), sts)
		if apierrors.IsNotFound(err) {
			return true
		}
		if err != nil || sts.Status.ObservedGeneration < sts.Generation || sts.Status.Replicas != 1 {
			return false
		}
		pod := &corev1.Pod{}
		err = k8sClient.Get(context.Background(), clientKey(ns, "m-elastic-0"), pod)
		return err == nil && metav1.IsControlledBy(pod, sts)
	})
}

func waitClaim(t *testing.T, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	waitFor(t, "claim "+name, func() bool { return k8sClient.Get(context.Background(), clientKey(ns, name), pvc) == nil })
	return pvc
}

// waitPod waits for the pod of that name that the StatefulSet of that uid made.
func waitPod(t *testing.T, ns, name string, owner types.UID) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	waitFor(t, "pod "+name+" of the new StatefulSet", func() bool {
		if k8sClient.Get(context.Background(), clientKey(ns, name), pod) != nil {
			return false
		}
		ref := metav1.GetControllerOf(pod)
		return ref != nil && ref.UID == owner
	})
	return pod
}

func waitGone(t *testing.T, obj client.Object, ns, name string) {
	t.Helper()
	waitFor(t, name+" deleted", func() bool {
		return apierrors.IsNotFound(k8sClient.Get(context.Background(), clientKey(ns, name), obj))
	})
}

// claimUIDs are the namespace's PVCs by name.
func claimUIDs(t *testing.T, ns string) map[string]types.UID {
	t.Helper()
	var list corev1.PersistentVolumeClaimList
	if err := k8sClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, pvc := range list.Items {
		out[pvc.Name] = pvc.UID
	}
	return out
}

// waitFor polls cond for up to two minutes: the controllers' work is
// asynchronous, and the garbage collector's takes a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 2 minutes for %s", what)
		}
	}
}

func prefixed(prefix string, items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = prefix + s
	}
	return out
}
