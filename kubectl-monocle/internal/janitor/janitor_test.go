package janitor

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/janitorjob"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

var wipe = janitorjob.Options{Monocle: "m", Command: "wipe-crawler-data", Workspace: "demo", Crawler: "zuul"}

// wipeJobOf is the Job of wipe as it exists, of UID uid, running.
func wipeJobOf(t *testing.T, uid string) *batchv1.Job {
	t.Helper()
	c := &plugin.Clients{Dyn: plugintest.RestoreCluster(t, "")}
	m, err := plugin.ReadMonocle(context.Background(), c, "ns", "m")
	if err != nil {
		t.Fatal(err)
	}
	job, _, err := plugin.JanitorJob(context.Background(), c, m, wipe, elastic.DefaultHookImage)
	if err != nil {
		t.Fatal(err)
	}
	job.UID = types.UID(uid)
	return job
}

// The commands that need the crawler stopped are those Monocle's own docs
// and source say: wipe-crawler-data (Monocle 1.11.2 README.md:621-629
// stops the crawler around it; the crawler adds documents and commits
// its metadata at src/Macroscope/Worker.hs:204-213), and
// set-crawler-commit-date (the crawler commits its own date when it ends
// an entity, Worker.hs:212-213, 283-291). update-idents needs none: the
// crawler writes authors with the config's idents (src/Lentille.hs:151-161).
func TestJanitorStopsTheCrawlerFor(t *testing.T) {
	for command := range janitorjob.Commands() {
		_, stops := stopsCrawler[command]
		if want := command != "update-idents"; stops != want {
			t.Errorf("%s stops the crawler: %t, want %t", command, stops, want)
		}
	}
}

// A janitor record it cannot check (anyone who edits the Monocle may
// write one) is refused, saying what to do, and nothing is written; one of
// another command is refused too, naming it. update-idents, which does not
// stop the crawler, reads none.
func TestJanitorRefusesARecordItCannotCheck(t *testing.T) {
	name := wipeJobOf(t, "").Name
	good := restorerecord.Janitor{MonocleUID: plugintest.MonocleUID, Job: name, JobUID: plugintest.JobUID, CrawlerEnabled: ptr.To(true)}.Encode()
	for label, tc := range map[string]struct {
		record string
		objs   []runtime.Object
		why    string
	}{
		"another Monocle's UID": {record: strings.Replace(good, plugintest.MonocleUID, plugintest.OtherUID, 1), why: "it was written on another Monocle (another UID)"},
		"another Job's UID":     {record: good, objs: []runtime.Object{wipeJobOf(t, plugintest.OtherUID)}, why: "the Job " + name + " is not the one it names: another UID"},
		"upper-case key":        {record: strings.Replace(good, `"job"`, `"Job"`, 1), why: "not in the form kubectl monocle writes"},
		"duplicate key":         {record: strings.TrimSuffix(good, "}") + `,"crawlerEnabled":false}`, why: "not in the form kubectl monocle writes"},
		"trailing data":         {record: good + "\n", why: "not in the form kubectl monocle writes"},
		"another command's": {record: restorerecord.Janitor{MonocleUID: plugintest.MonocleUID, Job: "m-janitor-0123456789", CrawlerEnabled: ptr.To(true)}.Encode(),
			why: "another janitor command (Job m-janitor-0123456789) stopped Monocle m's crawler and has not put it back"},
	} {
		t.Run(label, func(t *testing.T) {
			dyn := plugintest.ClusterWith(t, plugin.JanitorAnnotation, tc.record, tc.objs...)
			code, out, errOut := runWith(&plugin.Clients{Dyn: dyn}, "janitor", "m", "wipe-crawler-data", "-n", "ns", "--workspace", "demo", "--crawler", "zuul")
			if code != 2 || !strings.Contains(errOut, tc.why) || !printable.Clean(strings.TrimSpace(errOut)) {
				t.Errorf("exit %d\n%s%s", code, out, errOut)
			}
			if label != "another command's" && (!strings.Contains(errOut, "nothing of it is applied") || !strings.Contains(errOut, "kubectl -n ns annotate monocle m "+plugin.JanitorAnnotation+"-")) {
				t.Errorf("no remedy said:\n%s", errOut)
			}
			if w := plugintest.Writes(dyn); len(w) > 0 {
				t.Errorf("refused, yet wrote %v", w)
			}
		})
	}
}

// The janitor's Job (and a restore's update-idents) is built from the
// API's Deployment as the hook answers it for the spec: a Deployment a
// namespace editor planted under its name lends the Job nothing.
func TestJanitorJobIsTheHooks(t *testing.T) {
	c := &plugin.Clients{Dyn: plugintest.RestoreCluster(t, "")}
	m, err := plugin.ReadMonocle(context.Background(), c, "ns", "m")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := plugin.JanitorJob(context.Background(), c, m, wipe, elastic.DefaultHookImage)
	if err != nil {
		t.Fatal(err)
	}
	planted, err := plugin.Answered[*appsv1.Deployment](context.Background(), c, m, elastic.DefaultHookImage, instance.For("m").API)
	if err != nil {
		t.Fatal(err)
	}
	planted = planted.DeepCopy()
	planted.Namespace = "ns"
	spec := &planted.Spec.Template.Spec
	spec.HostPID, spec.ServiceAccountName = true, "admin"
	spec.Containers[0].Image = "evil"
	spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	spec.Volumes[0].ConfigMap = nil
	spec.Volumes[0].HostPath = &corev1.HostPathVolumeSource{Path: "/"}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(planted)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dyn.Resource(plugin.DeploymentGVR).Namespace("ns").Create(context.Background(), &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _, err := plugin.JanitorJob(context.Background(), c, m, wipe, elastic.DefaultHookImage)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("the planted Deployment changed the Job:\n%+v\nwant\n%+v", got.Spec.Template.Spec, want.Spec.Template.Spec)
	}
	if s := got.Spec.Template.Spec; s.HostPID || s.ServiceAccountName != "" || s.Containers[0].Image == "evil" || s.Volumes[0].HostPath != nil {
		t.Errorf("the Job carries the planted pod spec: %+v", s)
	}
}

// Every command the plugin prints is one of command.Forms, each value
// quoted.
func TestJanitorPrintedCommandsAreForms(t *testing.T) {
	for _, line := range []string{
		(&janitor{ns: "ns", o: janitorjob.Options{Monocle: "m"}}).refuseRecord("x").Error(),
	} {
		if rest := command.Strip(line); strings.Contains(rest, "kubectl") {
			t.Errorf("%s is not one of command.Forms", line)
		}
	}
}
