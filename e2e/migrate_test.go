package e2e

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A running seed-operator install (its children as monocle-operator v0.0.2
// makes them: a controller ownerReference but no controller-uid label,
// selectors {app: monocle, tier: ...}, the volume claim template
// N-elastic-data-volume) moves to monocle-hook with docs/upgrade.md's script,
// keeping its Elasticsearch volume, Secret and config. The PV binder and the
// PVC protection controller run, so the claims really are released and bound.
func TestMigrateFromSeedOperator(t *testing.T) {
	ctx := context.Background()
	startControllerManager(t, "persistentvolume-binder", "pvc-protection")
	ns := createNamespace(t, nil)
	d := newDriver(t, ns)
	m := d.createMonocle("monocle-sample", map[string]any{"monoclePublicURL": "http://localhost:8090"})
	owner := []metav1.OwnerReference{{APIVersion: m.GetAPIVersion(), Kind: m.GetKind(), Name: m.GetName(), UID: m.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	seed := func(name, tier string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: owner, Labels: map[string]string{"app": "monocle", "tier": tier}}
	}
	tier := func(t string) map[string]string { return map[string]string{"app": "monocle", "tier": t} }
	pod := func(t, image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tier(t)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: t, Image: image}}}}
	}
	// The seed's volume, bound.
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "seed-pv-" + ns},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1G")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              "standard",
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "none.example.com", VolumeHandle: ns}},
		},
	}
	oldClaim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "monocle-sample-elastic-data-volume-monocle-sample-elastic-0", Namespace: ns, Labels: tier("elastic")},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To("standard"), VolumeName: pv.Name,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1G")}},
		},
	}
	objects := []client.Object{
		pv, oldClaim,
		&corev1.Secret{ObjectMeta: seed("monocle-sample-api", ""), Data: map[string][]byte{"CRAWLERS_API_KEY": []byte("seed-key-0123456789abcdef"), "GITHUB_TOKEN": []byte("ghp_seed")}},
		&corev1.ConfigMap{ObjectMeta: seed("monocle-sample-api", ""), Data: map[string]string{"config.yaml": "workspaces: []"}},
		&appsv1.StatefulSet{ObjectMeta: seed("monocle-sample-elastic", "elastic"), Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: tier("elastic")}, Template: pod("elastic", "docker.elastic.co/elasticsearch/elasticsearch:7.17.5"),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "monocle-sample-elastic-data-volume"}, Spec: oldClaim.Spec}}}},
		&appsv1.Deployment{ObjectMeta: seed("monocle-sample-api", "api"), Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: tier("api")}, Template: pod("api", "quay.io/change-metrics/monocle:1.8.0")}},
		&appsv1.Deployment{ObjectMeta: seed("monocle-sample-crawler", "crawler"), Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: tier("crawler")}, Template: pod("crawler", "quay.io/change-metrics/monocle:1.8.0")}},
		&corev1.Service{ObjectMeta: seed("monocle-sample-api", "api"), Spec: corev1.ServiceSpec{Selector: tier("api"), Ports: []corev1.ServicePort{{Port: 8080}}}},
		&corev1.Service{ObjectMeta: seed("monocle-sample-elastic", "elastic"), Spec: corev1.ServiceSpec{Selector: tier("elastic"), Ports: []corev1.ServicePort{{Port: 9200}}}},
		&batchv1.Job{ObjectMeta: seed("update-idents-job", "update-idents"), Spec: batchv1.JobSpec{Template: func() corev1.PodTemplateSpec {
			p := pod("update-idents", "quay.io/change-metrics/monocle:1.8.0")
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			return p
		}()}},
	}
	for _, o := range objects {
		if err := k8sClient.Create(ctx, o); err != nil {
			t.Fatalf("creating the seed's %T %s: %v", o, o.GetName(), err)
		}
	}
	waitBound(t, ns, oldClaim.Name, pv.Name)

	// Metacontroller does not see the seed's children: no controller-uid.
	if n := len(d.resourceVersions("monocle-sample")); n != 0 {
		t.Fatalf("%d children observed before the migration", n)
	}
	out := shell(t, adminKubeconfig(t, "e2e-admin"), "../examples/migrate-from-seed-operator.sh "+ns+" monocle-sample")
	t.Log(out)

	d.converge("monocle-sample")
	waitBound(t, ns, "data-monocle-sample-elastic-0", pv.Name)
	if err := k8sClient.Get(ctx, clientKey("", pv.Name), pv); err != nil || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Fatalf("volume %v: %v", pv.Spec.PersistentVolumeReclaimPolicy, err)
	}
	secret := d.get("Secret.v1", "monocle-sample-api")
	for k, want := range map[string]string{"CRAWLERS_API_KEY": "c2VlZC1rZXktMDEyMzQ1Njc4OWFiY2RlZg==", "GITHUB_TOKEN": "Z2hwX3NlZWQ="} {
		if got, _, _ := unstructured.NestedString(secret.Object, "data", k); got != want {
			t.Errorf("Secret %s = %q, want the seed's %q", k, got, want)
		}
	}
	if got, _, _ := unstructured.NestedString(d.get("ConfigMap.v1", "monocle-sample-api").Object, "data", "config.yaml"); got != "workspaces: []" {
		t.Errorf("config %q, want the seed's", got)
	}
	sel, _, _ := unstructured.NestedStringMap(d.get("StatefulSet.apps/v1", "monocle-sample-elastic").Object, "spec", "selector", "matchLabels")
	if sel["app.kubernetes.io/instance"] != "monocle-sample" {
		t.Errorf("StatefulSet selector %v", sel)
	}
	if err := k8sClient.Get(ctx, clientKey(ns, "update-idents-job"), &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("the seed's Job: %v", err)
	}
	if c := conditionOf(d.monocle("monocle-sample"), "SpecApplied"); c["status"] != "True" {
		t.Errorf("SpecApplied %v", c)
	}
}

// waitBound waits for the PV binder to bind a claim to a volume.
func waitBound(t *testing.T, ns, claim, volume string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if err := k8sClient.Get(context.Background(), clientKey(ns, claim), pvc); err == nil &&
			pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName == volume {
			return
		}
	}
	t.Fatalf("claim %s not bound to %s: phase %q, volume %q", claim, volume, pvc.Status.Phase, pvc.Spec.VolumeName)
}
