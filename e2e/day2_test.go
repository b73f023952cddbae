package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// adminKubeconfig writes a kubeconfig of a system:masters user named name,
// for kubectl, helm and kube-controller-manager.
func adminKubeconfig(t *testing.T, name string) string {
	t.Helper()
	return kubeconfigOf(t, envtest.User{Name: name, Groups: []string{"system:masters"}})
}

// kubeconfigOf writes a kubeconfig of user, added to the test's API server.
func kubeconfigOf(t *testing.T, u envtest.User) string {
	t.Helper()
	user, err := testEnv.AddUser(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// shell runs a command line as a user would type it, with the assets'
// kubectl first on PATH.
func shell(t *testing.T, kubeconfig, line string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// Growing Elasticsearch's volume: the hook never touches the StatefulSet's
// templates; it reports the one command to run, which the API server then
// accepts, and reports the volume's size once it has grown. Shrinking is
// refused, and touches nothing either.
func TestStorageGrowthAsDesigned(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	class := "expandable-" + ns
	if err := k8sClient.Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class},
		Provisioner: "none.example.com", AllowVolumeExpansion: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	d.createMonocle("m", map[string]any{"elasticsearch": map[string]any{"storageSize": "1Gi", "storageClassName": class}})
	d.converge("m")

	// The claim the StatefulSet controller makes, bound as a provisioner
	// would bind it (neither runs here).
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + ns},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:       class,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "none.example.com", VolumeHandle: ns}},
			ClaimRef:               &corev1.ObjectReference{Namespace: ns, Name: "data-m-elastic-0"},
		},
	}
	if err := k8sClient.Create(ctx, pv); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-m-elastic-0", Namespace: ns, Labels: map[string]string{
			"app.kubernetes.io/name": "monocle", "app.kubernetes.io/instance": "m", "app.kubernetes.io/component": "elastic"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			VolumeName:       pv.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if err := k8sClient.Create(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	setClaimStatus := func(capacity string) {
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}}
		if err := k8sClient.Status().Update(ctx, pvc); err != nil {
			t.Fatal(err)
		}
	}
	setClaimStatus("1Gi")
	d.converge("m")
	sts := d.get("StatefulSet.apps/v1", "m-elastic").GetResourceVersion()

	// Grow: a condition carries the command.
	d.setSpec("m", map[string]any{"elasticsearch": map[string]any{"storageSize": "2Gi", "storageClassName": class}})
	d.sync("m")
	c := conditionOf(d.monocle("m"), "SpecApplied")
	msg, _ := c["message"].(string)
	_, command, found := strings.Cut(msg, "run: ")
	if c["reason"] != "VolumeExpansionRequired" || !found {
		t.Fatalf("SpecApplied = %v", c)
	}
	if got := d.get("StatefulSet.apps/v1", "m-elastic").GetResourceVersion(); got != sts {
		t.Fatal("a size change touched the StatefulSet")
	}
	// The admin runs it, as written.
	t.Logf("running: %s", command)
	shell(t, adminKubeconfig(t, "e2e-admin"), command)
	d.sync("m")
	if c := conditionOf(d.monocle("m"), "SpecApplied"); c["status"] != "True" {
		t.Fatalf("after the expansion, SpecApplied = %v", c)
	}
	storage, _, _ := unstructured.NestedStringMap(d.monocle("m").Object, "status", "storage")
	if storage["requested"] != "2Gi" || storage["capacity"] != "1Gi" {
		t.Errorf("status.storage = %v, want 2Gi requested of a 1Gi volume still resizing", storage)
	}
	if err := k8sClient.Get(ctx, clientKey(ns, pvc.Name), pvc); err != nil {
		t.Fatal(err)
	}
	setClaimStatus("2Gi") // the resizer has done its work
	d.converge("m")
	storage, _, _ = unstructured.NestedStringMap(d.monocle("m").Object, "status", "storage")
	if storage["capacity"] != "2Gi" {
		t.Errorf("status.storage = %v", storage)
	}

	// Shrink: refused, nothing touched.
	d.setSpec("m", map[string]any{"elasticsearch": map[string]any{"storageSize": "1Gi", "storageClassName": class}})
	before := d.resourceVersions("m")
	if r := d.sync("m"); r.changed() {
		t.Fatalf("a shrink changed %v %v %v", r.created, r.updated, r.deleted)
	}
	if c := conditionOf(d.monocle("m"), "SpecApplied"); c["reason"] != "StorageShrinkRefused" {
		t.Fatalf("SpecApplied = %v", c)
	}
	if after := d.resourceVersions("m"); !slicesEqualMaps(before, after) {
		t.Fatal("a shrink moved a child")
	}
	if got := d.get("StatefulSet.apps/v1", "m-elastic").GetResourceVersion(); got != sts {
		t.Fatal("the StatefulSet was touched")
	}
}

// A user-owned ConfigMap, named in the spec, reaches the pods through the
// customize hook: an edit to it rolls them, and an idents edit runs one new
// update-idents Job.
func TestRelatedConfigMapRollsThePods(t *testing.T) {
	ctx := context.Background()
	ns := restrictedNamespace(t)
	d := newDriver(t, ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "team-config", Namespace: ns},
		Data: map[string]string{"config.yaml": "workspaces:\n  - name: team\n    crawlers: []\n"}}
	if err := k8sClient.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	d.createMonocle("m", map[string]any{"configMapRef": map[string]any{"name": "team-config"}})
	d.converge("m")
	d.markReady("StatefulSet.apps/v1", "m-elastic")
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	firstJobs := jobs(d, "m")
	mount := mountedConfig(d.get("Deployment.apps/v1", "m-api"))

	cm.Data["config.yaml"] += "    idents:\n      - ident: Jane\n        aliases: [github.com/jane]\n"
	if err := k8sClient.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	d.converge("m")
	newMount := mountedConfig(d.get("Deployment.apps/v1", "m-api"))
	if crawler := mountedConfig(d.get("Deployment.apps/v1", "m-crawler")); newMount == mount || crawler != newMount {
		t.Errorf("mounts %s, then %s and the crawler %s", mount, newMount, crawler)
	}
	if got, _, _ := unstructured.NestedString(d.get("ConfigMap.v1", newMount).Object, "data", "config.yaml"); got != cm.Data["config.yaml"] {
		t.Errorf("%s holds %q", newMount, got)
	}
	d.markReady("Deployment.apps/v1", "m-api")
	d.converge("m")
	if got := jobs(d, "m"); len(got) != 1 || len(firstJobs) != 1 || got[0] == firstJobs[0] {
		t.Errorf("jobs %v, before %v", got, firstJobs)
	}
	// The user's ConfigMap is not a child: it is never written.
	if err := k8sClient.Get(ctx, clientKey(ns, "team-config"), cm); err != nil || len(cm.OwnerReferences) > 0 {
		t.Errorf("team-config: %v %v", err, cm.OwnerReferences)
	}
}
