package plugintest

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
)

// SnapshotsMonocle is a Monocle that takes snapshots.
const SnapshotsMonocle = `apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata: {name: m, namespace: ns, uid: m-uid}
spec:
  elasticsearch:
    snapshots: {schedule: "0 3 * * *", keep: 7}
`

// Plant writes into the CronJob's template what a namespace editor could:
// a privileged init container, a hostPath /, hostPID, another
// ServiceAccount, another image and args.
func Plant(cj *batchv1.CronJob) {
	spec := &cj.Spec.JobTemplate.Spec.Template.Spec
	spec.InitContainers = []corev1.Container{{Name: "x", Image: "evil", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
	spec.HostPID = true
	spec.ServiceAccountName = "admin"
	spec.Containers[0].Image = "evil"
	spec.Containers[0].Args = []string{"snapshot", "--prefix", "\x1b]0;owned\x07"}
}

// SnapshotsAnswer is a fake cluster holding snapshotsMonocle, and its
// snapshots CronJob as the hook answers it.
func SnapshotsAnswer(t *testing.T) (*plugin.Clients, *batchv1.CronJob) {
	t.Helper()
	c := &plugin.Clients{Dyn: FakeCluster(t, SnapshotsMonocle)}
	m, err := plugin.ReadMonocle(context.Background(), c, "ns", "m")
	if err != nil {
		t.Fatal(err)
	}
	cj, err := plugin.AnsweredCronJob(context.Background(), c, m, elastic.DefaultHookImage)
	if err != nil {
		t.Fatal(err)
	}
	return c, cj
}
