package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/janitorjob"
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

// The restore records what the user had, null for what was not set, and
// puts back exactly that.
func TestRestorePatches(t *testing.T) {
	for name, tc := range map[string]struct {
		spec string
		back string
	}{
		"defaults":       {`{}`, `{"metadata":{"annotations":{"monocle.monocle.change-metrics.io/restore":null}},"spec":{"api":{"replicas":null},"crawler":{"enabled":null},"elasticsearch":{"snapshots":{"suspend":null}}}}`},
		"the user's own": {`{"api":{"replicas":3},"crawler":{"enabled":false},"elasticsearch":{"snapshots":{"suspend":true,"keep":2}}}`, `{"metadata":{"annotations":{"monocle.monocle.change-metrics.io/restore":null}},"spec":{"api":{"replicas":3},"crawler":{"enabled":false},"elasticsearch":{"snapshots":{"suspend":true}}}}`},
	} {
		t.Run(name, func(t *testing.T) {
			// As the dynamic client decodes it: integers are int64.
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(`{"apiVersion":"monocle.monocle.change-metrics.io/v1alpha1","kind":"Monocle","metadata":{"name":"m","uid":"` + plugintest.MonocleUID + `","resourceVersion":"7"},"spec":` + tc.spec + `}`)); err != nil {
				t.Fatal(err)
			}
			r := &restorer{name: "m", ns: "ns", o: restoreOptions{snapshot: "s"}, repository: "monocle", location: "/usr/share/elasticsearch/snapshots/monocle"}
			rec, resuming, err := r.record(u)
			if err != nil || resuming {
				t.Fatal(err, resuming)
			}
			if got := string(r.backPatch(rec)); got != tc.back {
				t.Errorf("back:\n got %s\nwant %s", got, tc.back)
			}
			var stop map[string]any
			if err := json.Unmarshal(r.stopPatch(u, rec), &stop); err != nil {
				t.Fatal(err)
			}
			// Resumed from the annotation the stop patch writes, it
			// puts back the same.
			u.SetAnnotations(map[string]string{plugin.RestoreAnnotation: stop["metadata"].(map[string]any)["annotations"].(map[string]any)[plugin.RestoreAnnotation].(string)})
			again, resuming, err := r.record(u)
			if err != nil || !resuming || string(r.backPatch(again)) != tc.back {
				t.Errorf("resumed: %s, %v, %v", r.backPatch(again), resuming, err)
			}
			if stop["metadata"].(map[string]any)["resourceVersion"] != "7" {
				t.Error("the stop patch does not hold the resourceVersion read")
			}
			// Another snapshot's restore under way is refused, naming it.
			r.o.snapshot = "other"
			if _, _, err := r.record(u); err == nil || !strings.Contains(err.Error(), `a restore of snapshot s is under way`) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// Every command the plugin prints is one of command.Forms, each value
// quoted.
func TestPrintedCommandsAreForms(t *testing.T) {
	for _, line := range []string{resumeCommand("ns", "m", "monocle-20261130-030000"), plugin.UndoCommand("ns", "m"), explicitUndoCommand("ns", "m"), plugin.LogsCommand("ns", "m-janitor-0123456789"),
		(&janitor{ns: "ns", o: janitorjob.Options{Monocle: "m"}}).refuseRecord("x").Error(),
		plugin.PutBack("ns", "CronJob", "m-snapshots"), plugin.PutBack("ns", "StatefulSet", "m-elastic"), plugin.PutBack("ns", "Deployment", "m-api"), plugin.PutBack("ns", "Job", "m-update-idents-0123456789")} {
		if rest := command.Strip(line); strings.Contains(rest, "kubectl") {
			t.Errorf("%s is not one of command.Forms", line)
		}
	}
	if got := resumeCommand("ns", "m", "a b'c"); got != `kubectl monocle restore m -n ns --snapshot 'a b'\''c'` {
		t.Errorf("unquoted: %s", got)
	}
}

// A snapshot name that is not what `monocle-hook snapshot` writes is
// refused before any Job exists: backup's, from the prefix of the hook's
// CronJob, and restore's --snapshot; the refusal shows the name escaped.
func TestSnapshotNamesAreTheCommands(t *testing.T) {
	c, want := plugintest.SnapshotsAnswer(t)
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
	for _, snapshot := range []string{"monocle-before-upgrade", "\x1b[2Jmonocle-20261130-030000", "../monocle-20261130-030000"} {
		code, stdout, stderr := runWith(c, "restore", "m", "-n", "ns", "--snapshot", snapshot)
		if code != 2 || !strings.Contains(stderr, "not a name monocle-hook snapshot writes") || !printable.Clean(strings.ReplaceAll(stdout+stderr, "\n", "")) {
			t.Errorf("restore --snapshot %q: exit %d\n%s%s", snapshot, code, stdout, stderr)
		}
	}
	if jobs, err := c.Dyn.Resource(plugin.JobGVR).Namespace("ns").List(context.Background(), metav1.ListOptions{}); err != nil || len(jobs.Items) > 0 {
		t.Errorf("Jobs created: %v (%v)", jobs, err)
	}
}

// A Monocle whose spec the hook refuses has its children held as last
// applied, a copy anyone who may edit the child can write: the plugin
// builds nothing from that answer. backup and restore are refused, naming
// the reason (backup the command that says what to change), and change
// nothing; check reports the refusal and compares no child.
func TestNoJobFromAHeldAnswer(t *testing.T) {
	held := strings.Replace(plugintest.SnapshotsMonocle, "spec:\n", "spec:\n  publicURL: \"not a url\"\n", 1)
	// Its CronJob, held as the tenant wrote it.
	cronJob := `
apiVersion: batch/v1
kind: CronJob
metadata: {name: m-snapshots, namespace: ns, labels: {app.kubernetes.io/instance: m}}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          hostPID: true
          containers: [{name: snapshot, image: evil, args: [snapshot]}]
`
	c := &plugin.Clients{Dyn: plugintest.FakeCluster(t, held, cronJob)}
	err := backup(context.Background(), c, io.Discard, "ns", "m", elastic.DefaultHookImage, time.Minute, time.Now)
	if err == nil || !strings.Contains(err.Error(), "the hook does not apply Monocle m's spec in full (InvalidSpec: ") ||
		!strings.Contains(err.Error(), "kubectl monocle -n ns check m says what to change") {
		t.Errorf("backup: %v", err)
	}
	code, stdout, stderr := runWith(c, "restore", "m", "-n", "ns", "--snapshot", "monocle-20261130-030000")
	if code != 2 || !strings.Contains(stderr, "the hook does not apply Monocle m's spec in full (InvalidSpec: ") {
		t.Errorf("restore: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runWith(c, "check", "-n", "ns")
	if code != 1 || !strings.Contains(stdout, "ns/m: InvalidSpec: ") || strings.Contains(stdout, ChildDrift) {
		t.Errorf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, a := range c.Dyn.(*dynamicfake.FakeDynamicClient).Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" {
			t.Errorf("%s %s: a refused command changed the cluster", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if jobs, err := c.Dyn.Resource(plugin.JobGVR).Namespace("ns").List(context.Background(), metav1.ListOptions{}); err != nil || len(jobs.Items) > 0 {
		t.Errorf("Jobs created: %v (%v)", jobs, err)
	}
}
