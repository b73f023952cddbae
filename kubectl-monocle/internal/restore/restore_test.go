package restore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/janitorjob"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorejob"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

// goodRecord is the record a restore of restored at step writes on
// restoreMonocle.
func goodRecord(step restorerecord.Step) restorerecord.Record {
	r := restorerecord.Record{MonocleUID: plugintest.MonocleUID, Snapshot: plugintest.Restored, Repository: snapshot.DefaultRepository, Location: snapshot.DefaultLocation,
		Step: step, Before: &restorerecord.Before{}}
	if step != restorerecord.Stopping {
		r.JobUID = plugintest.JobUID
	}
	r.Before.Spec.API.Replicas = ptr.To[int32](2)
	r.Before.Spec.Crawler.Enabled = ptr.To(true)
	return r
}

// restoreJobOf is the restore Job of restored as it exists, of UID uid,
// ended or running.
func restoreJobOf(t *testing.T, uid string, ended bool) *batchv1.Job {
	t.Helper()
	job, err := restorejob.Build(restorejob.Options{Monocle: "m", Namespace: "ns", Snapshot: plugintest.Restored, Repository: snapshot.DefaultRepository,
		Location: snapshot.DefaultLocation, Image: elastic.DefaultHookImage, Timeout: snapshot.DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	job.UID = types.UID(uid)
	if ended {
		job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	}
	return job
}

// identsJobOf is the update-idents Job a restore of restoreMonocle
// creates, as it exists, of UID uid, running.
func identsJobOf(t *testing.T, uid string) *batchv1.Job {
	t.Helper()
	c := &plugin.Clients{Dyn: plugintest.RestoreCluster(t, "")}
	m, err := plugin.ReadMonocle(context.Background(), c, "ns", "m")
	if err != nil {
		t.Fatal(err)
	}
	job, _, err := plugin.JanitorJob(context.Background(), c, m, janitorjob.Options{Monocle: "m", Command: "update-idents"}, elastic.DefaultHookImage)
	if err != nil {
		t.Fatal(err)
	}
	job.UID = types.UID(uid)
	return job
}

// A restore resumes only from a record it can check: in the form it
// writes, of this Monocle's UID, for the repository the Monocle's own
// snapshots use (as the hook answers its CronJob), its Job the one it
// created (by UID). Any other is refused, saying what to do (--undo with
// explicit values, or a fresh restore), and nothing is written: no patch,
// no Job created or deleted. --undo refuses the same records.
func TestRestoreRefusesARecordItCannotCheck(t *testing.T) {
	good := goodRecord(restorerecord.Restoring).Encode()
	with := func(f func(*restorerecord.Record)) string {
		r := goodRecord(restorerecord.Restoring)
		f(&r)
		return r.Encode()
	}
	for name, tc := range map[string]struct {
		record string
		objs   []runtime.Object
		why    string
		undo   bool // --undo refuses it too (it reads no Job's UID)
	}{
		"another repository": {record: with(func(r *restorerecord.Record) { r.Repository = "other" }), undo: true,
			why: `it names repository "other" at "/usr/share/elasticsearch/snapshots/monocle", not the one Monocle m's snapshots use (monocle at /usr/share/elasticsearch/snapshots/monocle)`},
		"another location": {record: with(func(r *restorerecord.Record) { r.Location = "/usr/share/elasticsearch/snapshots/other" }), undo: true,
			why: `it names repository "monocle" at "/usr/share/elasticsearch/snapshots/other"`},
		"another Monocle's UID": {record: with(func(r *restorerecord.Record) { r.MonocleUID = plugintest.OtherUID }), undo: true,
			why: "it was written on another Monocle (another UID)"},
		"another Job's UID": {record: good, objs: []runtime.Object{restoreJobOf(t, plugintest.OtherUID, false)},
			why: "the restore Job " + restorejob.JobName("m", "monocle", plugintest.Restored) + " is not the one it names: another UID"},
		"another Job's UID, ended": {record: good, objs: []runtime.Object{restoreJobOf(t, plugintest.OtherUID, true)},
			why: "is not the one it names: another UID"},
		"another update-idents Job's UID": {record: goodRecord(restorerecord.UpdatingIdents).Encode(), objs: []runtime.Object{identsJobOf(t, plugintest.OtherUID)},
			why: "the update-idents Job " + identsJobOf(t, plugintest.OtherUID).Name + " is not the one it names: another UID"},
		"upper-case key":  {record: strings.Replace(good, `"repository"`, `"Repository"`, 1), undo: true, why: "not in the form kubectl monocle writes"},
		"duplicate key":   {record: strings.TrimSuffix(good, "}") + `,"repository":"other"}`, undo: true, why: "not in the form kubectl monocle writes"},
		"duplicate first": {record: strings.Replace(good, `{"monocleUID"`, `{"repository":"other","monocleUID"`, 1), undo: true, why: "not in the form kubectl monocle writes"},
		"trailing data":   {record: good + `{}`, undo: true, why: "not in the form kubectl monocle writes"},
		"trailing space":  {record: good + " ", undo: true, why: "not in the form kubectl monocle writes"},
		"the old form": {record: `{"snapshot":"` + plugintest.Restored + `","repository":"monocle","location":"/usr/share/elasticsearch/snapshots/monocle","before":{"spec":{"api":{"replicas":2},"crawler":{"enabled":null},"elasticsearch":{"snapshots":{"suspend":null}}}}}`,
			undo: true, why: "not in the form kubectl monocle writes"},
		"a terminal escape": {record: with(func(r *restorerecord.Record) { r.Repository = "\x1b]0;owned\x07" }), undo: true, why: `\x1b`},
	} {
		t.Run(name, func(t *testing.T) {
			runs := [][]string{{"restore", "m", "-n", "ns", "--snapshot", plugintest.Restored}}
			if tc.undo {
				runs = append(runs, []string{"restore", "m", "-n", "ns", "--undo"})
			}
			for _, args := range runs {
				dyn := plugintest.RestoreCluster(t, tc.record, tc.objs...)
				code, out, errOut := runWith(&plugin.Clients{Dyn: dyn}, args...)
				if code != 2 || !strings.Contains(errOut, "is not a record this command wrote for it (") || !strings.Contains(errOut, tc.why) ||
					!strings.Contains(errOut, "nothing of it is applied") ||
					!strings.Contains(errOut, explicitUndoCommand("ns", "m")) || !printable.Clean(strings.TrimSpace(errOut)) {
					t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
				}
				if args[len(args)-1] != "--undo" && !strings.Contains(errOut, "restore afresh with "+resumeCommand("ns", "m", plugintest.Restored)) {
					t.Errorf("%q: no fresh restore said:\n%s", args, errOut)
				}
				if w := plugintest.Writes(dyn); len(w) > 0 {
					t.Errorf("%q: refused, yet wrote %v", args, w)
				}
			}
		})
	}
}

// --undo with explicit values puts them back, whatever the record, and
// takes all three or none.
func TestRestoreUndoWithExplicitValues(t *testing.T) {
	dyn := plugintest.RestoreCluster(t, "forged")
	code, out, errOut := runWith(&plugin.Clients{Dyn: dyn}, "restore", "m", "-n", "ns", "--undo", "--api-replicas", "3", "--crawler-enabled=true", "--snapshots-suspend=false")
	if code != 0 || !strings.Contains(out, `put back with the values given`) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	u, err := dyn.Resource(plugin.MonocleGVR).Namespace("ns").Get(context.Background(), "m", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := u.GetAnnotations()[plugin.RestoreAnnotation]; ok || nested(u, "spec", "api", "replicas") != int64(3) ||
		nested(u, "spec", "crawler", "enabled") != true || nested(u, "spec", "elasticsearch", "snapshots", "suspend") != false {
		t.Errorf("after: %v", u.Object)
	}
	for _, args := range [][]string{
		{"restore", "m", "-n", "ns", "--undo", "--api-replicas", "3"},
		{"restore", "m", "-n", "ns", "--snapshot", plugintest.Restored, "--api-replicas", "3", "--crawler-enabled=true", "--snapshots-suspend=false"},
		{"restore", "m", "-n", "ns", "--undo", "--api-replicas", "-1", "--crawler-enabled=true", "--snapshots-suspend=false"},
	} {
		dyn := plugintest.RestoreCluster(t, "forged")
		if code, out, errOut := runWith(&plugin.Clients{Dyn: dyn}, args...); code != 2 || len(plugintest.Writes(dyn)) > 0 {
			t.Errorf("%q: exit %d, writes %v\n%s%s", args, code, plugintest.Writes(dyn), out, errOut)
		}
	}
}

// The record the restore writes at each step is one it resumes from.
func TestRestoreResumesItsOwnRecord(t *testing.T) {
	for _, step := range restorerecord.Steps {
		dyn := plugintest.RestoreCluster(t, goodRecord(step).Encode())
		r := &restorer{c: &plugin.Clients{Dyn: dyn}, out: new(strings.Builder), ns: "ns", name: "m", o: restoreOptions{snapshot: plugintest.Restored, hookImage: elastic.DefaultHookImage}}
		u, m, err := r.read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.ownRepository(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		rec, resuming, err := r.record(u)
		if err != nil || !resuming || rec.Encode() != goodRecord(step).Encode() {
			t.Errorf("%s: %v %v %s", step, err, resuming, rec.Encode())
		}
	}
}

// A restore ends with update-idents for the config the API runs: a
// snapshot holds each change's authors as the crawler resolved them from
// the config's idents when it crawled (Monocle 1.11.2 src/Lentille.hs:151-161,
// toIdent, given the config's getIdentByAliasCB at src/Macroscope/Main.hs:346,355,370),
// and only the janitor's update-idents rewrites them for the idents of
// today's config (src/Monocle/Backend/Janitor.hs:29-39 updateAuthor,
// 41-55 updateIdentsOnWorkspace). So an idents edit made since the
// snapshot would be lost on the restored changes. The Job is the janitor's
// (kubectl monocle janitor N update-idents), built from the hook's answer
// for the spec, never the observed Deployment: --dry-run shows it and
// writes nothing.
func TestRestoreEndsWithUpdateIdents(t *testing.T) {
	dyn := plugintest.RestoreCluster(t, "")
	code, out, errOut := runWith(&plugin.Clients{Dyn: dyn}, "restore", "m", "-n", "ns", "--snapshot", plugintest.Restored, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	want := identsJobOf(t, "")
	c := want.Spec.Template.Spec.Containers[0]
	switch {
	case strings.Join(c.Command[:3], " ") != "monocle janitor update-idents":
		t.Errorf("the idents Job runs %q", c.Command)
	case !strings.Contains(out, "4. Create the second Job below, update-idents for the config the API runs"):
		t.Errorf("the plan says no update-idents:\n%s", out)
	case !strings.Contains(out, "name: "+want.Name) || !strings.Contains(out, "image: "+c.Image) || !strings.Contains(out, "- update-idents"):
		t.Errorf("the plan does not show Job %s (image %s):\n%s", want.Name, c.Image, out)
	}
	if w := plugintest.Writes(dyn); len(w) > 0 {
		t.Errorf("--dry-run wrote %v", w)
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
func TestRestorePrintedCommandsAreForms(t *testing.T) {
	for _, line := range []string{resumeCommand("ns", "m", "monocle-20261130-030000"), plugin.UndoCommand("ns", "m"), explicitUndoCommand("ns", "m"), plugin.LogsCommand("ns", "m-janitor-0123456789"),
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
func TestRestoreSnapshotNamesAreTheCommands(t *testing.T) {
	c, _ := plugintest.SnapshotsAnswer(t)
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
func TestRestoreNoJobFromAHeldAnswer(t *testing.T) {
	c := plugintest.HeldAnswer(t)
	code, stdout, stderr := runWith(c, "restore", "m", "-n", "ns", "--snapshot", "monocle-20261130-030000")
	if code != 2 || !strings.Contains(stderr, "the hook does not apply Monocle m's spec in full (InvalidSpec: ") {
		t.Errorf("restore: exit %d\n%s%s", code, stdout, stderr)
	}
	plugintest.Unchanged(t, c)
}
