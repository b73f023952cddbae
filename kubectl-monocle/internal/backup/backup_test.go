package backup

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

// A backup's Job is built from the hook's own answer for the Monocle,
// never from the observed CronJob: whatever a tenant planted in that
// CronJob is in no Job; its name is a job-name label value for the longest
// Monocle name.
func TestBackupJobIsTheHooks(t *testing.T) {
	_, want := plugintest.SnapshotsAnswer(t)
	if fields := plugin.Drift(&want.DeepCopy().Spec.JobTemplate.Spec.Template.Spec, &want.Spec.JobTemplate.Spec.Template.Spec, plugin.CronJobTemplate); len(fields) > 0 {
		t.Errorf("the hook's own CronJob drifts: %v", fields)
	}
	planted := want.DeepCopy()
	planted.Name, planted.Namespace, planted.UID = instance.For(strings.Repeat("m", instance.MaxNameLength)).Snapshots, "ns", "cj-uid"
	plugintest.Plant(planted)
	fields := strings.Join(plugin.Drift(&planted.Spec.JobTemplate.Spec.Template.Spec, &want.Spec.JobTemplate.Spec.Template.Spec, plugin.CronJobTemplate), " ")
	for _, f := range []string{"initContainers", "containers[0].image", "containers[0].args", "volumes", "hostPID", "serviceAccountName"} {
		if !strings.Contains(fields, "spec.jobTemplate.spec.template.spec."+f) {
			t.Errorf("drift does not name %s: %s", f, fields)
		}
	}
	at := time.Date(2026, 12, 3, 4, 5, 6, 0, time.UTC)
	job, name, err := backupJob(planted, want, at)
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Spec.Template.Spec
	args := spec.Containers[0].Args
	switch {
	case len(spec.InitContainers) > 0 || spec.HostPID || spec.ServiceAccountName != "" || len(spec.Containers) != 1:
		t.Errorf("the Job carries the planted pod spec: %+v", spec)
	case spec.Containers[0].Image != want.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image || spec.Containers[0].Image == "evil":
		t.Errorf("image %s", spec.Containers[0].Image)
	case slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.HostPath != nil }):
		t.Errorf("volumes %+v", spec.Volumes)
	case name != "monocle-20261203-040506":
		t.Errorf("snapshot %s", name)
	case strings.Join(args, " ") != strings.Join(want.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args, " ")+" --name "+name:
		t.Errorf("args %q", args)
	case len(validation.IsDNS1123Label(job.Name)) > 0:
		t.Errorf("name %s: %v", job.Name, validation.IsDNS1123Label(job.Name))
	case metav1.GetControllerOf(job) == nil || metav1.GetControllerOf(job).UID != "cj-uid":
		t.Errorf("owners %+v", job.OwnerReferences)
	case job.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" || job.Labels["app.kubernetes.io/instance"] != "m":
		t.Errorf("annotations %v, labels %v", job.Annotations, job.Labels)
	}
}

// A backup against a CronJob a tenant changed is refused, naming the
// fields and how to put it back, and creates no Job.
func TestBackupRefusesAPlantedCronJob(t *testing.T) {
	c, want := plugintest.SnapshotsAnswer(t)
	planted := want.DeepCopy()
	planted.Namespace = "ns"
	plugintest.Plant(planted)
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(planted)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dyn.Resource(plugin.CronJobGVR).Namespace("ns").Create(context.Background(), &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = backup(context.Background(), c, &out, "ns", "m", elastic.DefaultHookImage, time.Minute, time.Now)
	if err == nil || !strings.Contains(err.Error(), "spec.jobTemplate.spec.template.spec.serviceAccountName differ") || !strings.Contains(err.Error(), "kubectl -n ns delete cronjob m-snapshots") {
		t.Errorf("error %v", err)
	}
	jobs, err := c.Dyn.Resource(plugin.JobGVR).Namespace("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(jobs.Items) > 0 {
		t.Errorf("Jobs created: %v (%v)", jobs, err)
	}
}

// A snapshot name that is not what `monocle-hook snapshot` writes is
// refused before any Job exists: backup's, from the prefix of the hook's
// CronJob, and restore's --snapshot; the refusal shows the name escaped.
func TestBackupSnapshotNamesAreTheCommands(t *testing.T) {
	_, want := plugintest.SnapshotsAnswer(t)
	at := time.Date(2026, 12, 3, 4, 5, 6, 0, time.UTC)
	for prefix, ok := range map[string]bool{"nightly": true, "\x1b]0;owned\x07": false, "Monocle": false, "a/b": false} {
		cj := want.DeepCopy()
		args := &cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args
		*args = append(*args, "--prefix", prefix)
		_, name, err := backupJob(cj, cj, at)
		switch {
		case ok && (err != nil || name != prefix+"-20261203-040506"):
			t.Errorf("prefix %q: %s, %v", prefix, name, err)
		case !ok && (err == nil || !printable.Clean(err.Error())):
			t.Errorf("prefix %q: %s, %v", prefix, name, err)
		}
	}
}

// A Monocle whose spec the hook refuses has its children held as last
// applied, a copy anyone who may edit the child can write: the plugin
// builds nothing from that answer. backup and restore are refused, naming
// the reason (backup the command that says what to change), and change
// nothing; check reports the refusal and compares no child.
func TestBackupNoJobFromAHeldAnswer(t *testing.T) {
	c := plugintest.HeldAnswer(t)
	err := backup(context.Background(), c, io.Discard, "ns", "m", elastic.DefaultHookImage, time.Minute, time.Now)
	if err == nil || !strings.Contains(err.Error(), "the hook does not apply Monocle m's spec in full (InvalidSpec: ") ||
		!strings.Contains(err.Error(), "kubectl monocle -n ns check m says what to change") {
		t.Errorf("backup: %v", err)
	}
	plugintest.Unchanged(t, c)
}
