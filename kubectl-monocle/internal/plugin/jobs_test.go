package plugin_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugin"
	"github.com/change-metrics/monocle-hook/kubectl-monocle/internal/plugintest"
)

const followedJob = `apiVersion: batch/v1
kind: Job
metadata: {name: m-janitor-0123456789, namespace: ns, uid: job-uid}
spec: {template: {spec: {containers: [{name: janitor, image: x}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: m-janitor-0123456789-abcde, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z",
  labels: {batch.kubernetes.io/job-name: m-janitor-0123456789, batch.kubernetes.io/controller-uid: job-uid},
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: m-janitor-0123456789, uid: job-uid, controller: true}]}
spec: {containers: [{name: janitor, image: x}]}
status:
  phase: PHASE
  containerStatuses: [{name: janitor, image: x, imageID: "", ready: false, restartCount: 0, state: {terminated: {exitCode: 3}}}]
`

// An earlier Job's pod of the same name: never taken for the Job's.
const earlierPod = `apiVersion: v1
kind: Pod
metadata: {name: m-janitor-0123456789-old, namespace: ns, labels: {batch.kubernetes.io/job-name: m-janitor-0123456789, batch.kubernetes.io/controller-uid: earlier-uid},
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: m-janitor-0123456789, uid: earlier-uid, controller: true}]}
spec: {containers: [{name: janitor, image: x}]}
status: {phase: Running}
`

// A tenant's pod that carries the Job's labels (and a later creation, so
// that it would be the last) but no controller owner reference to the Job:
// never followed nor counted.
const labelledPod = `apiVersion: v1
kind: Pod
metadata: {name: m-janitor-0123456789-forged, namespace: ns, creationTimestamp: "2026-01-02T00:00:00Z",
  labels: {batch.kubernetes.io/job-name: m-janitor-0123456789, batch.kubernetes.io/controller-uid: job-uid}}
spec: {containers: [{name: janitor, image: x}]}
status:
  phase: Running
  containerStatuses: [{name: janitor, image: x, imageID: "", ready: true, restartCount: 0, state: {terminated: {exitCode: 0}}}]
`

// A running pod's log is followed as it comes, each line escaped; the
// exit code is the pod's.
func TestFollowJobFollowsTheRunningPod(t *testing.T) {
	dyn := plugintest.FakeCluster(t, strings.Replace(followedJob, "PHASE", "Running", 1), earlierPod, labelledPod)
	var asked []bool
	c := &plugin.Clients{Dyn: dyn, Logs: func(ctx context.Context, ns, pod string, follow bool, _ int64) (io.ReadCloser, error) {
		asked = append(asked, follow)
		if pod != "m-janitor-0123456789-abcde" {
			t.Errorf("the log of %s, not the Job's pod", pod)
		}
		// The pod ends as its log does: the Job is marked complete.
		job, err := dyn.Resource(plugin.JobGVR).Namespace(ns).Get(ctx, "m-janitor-0123456789", metav1.GetOptions{})
		if err != nil {
			t.Error(err)
		}
		_ = unstructured.SetNestedSlice(job.Object, []any{map[string]any{"type": "Complete", "status": "True"}}, "status", "conditions")
		if _, err := dyn.Resource(plugin.JobGVR).Namespace(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
		// The last line comes after the Job is seen ended, as a pod's
		// last words reach the API server after its end: cut if the
		// stream's context ends with the wait.
		return io.NopCloser(io.MultiReader(strings.NewReader("updating idents\n\x1b[2Jcleared\n"+strings.Repeat("x", 70<<10)+"\n"), &lateTail{ctx: ctx})), nil
	}}
	var out bytes.Buffer
	job, code, err := plugin.FollowJob(context.Background(), c, &out, "ns", "m-janitor-0123456789", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ended, ok, _ := plugin.JobEnd(job); !ended || !ok || code != 3 {
		t.Errorf("ended %v, succeeded %v, code %d", ended, ok, code)
	}
	text := out.String()
	for _, want := range []string{"--- log of pod m-janitor-0123456789-abcde, followed ---\nupdating idents\n", `\x1b[2Jcleared`, "\nlast\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%.300s", want, text)
		}
	}
	if !printable.Clean(strings.ReplaceAll(text, "\n", "")) || len(asked) != 1 || !asked[0] {
		t.Errorf("raw control characters, or logs asked %v (want one follow)", asked)
	}
}

// lateTail is a log's last line, 1.5 s late (the wait polls every second).
type lateTail struct {
	ctx  context.Context
	done bool
}

func (l *lateTail) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	select {
	case <-l.ctx.Done():
		return 0, l.ctx.Err()
	case <-time.After(1500 * time.Millisecond):
		l.done = true
		return copy(p, "last"), nil
	}
}

// A Job whose pods were never seen running: its last pod's last lines,
// once it ended.
func TestFollowJobPrintsTheEndedPodsLog(t *testing.T) {
	dyn := plugintest.FakeCluster(t, strings.Replace(strings.Replace(followedJob, "PHASE", "Failed", 1),
		"spec: {template:", "status: {conditions: [{type: Failed, status: \"True\", message: BackoffLimitExceeded}]}\nspec: {template:", 1), labelledPod)
	var asked []bool
	c := &plugin.Clients{Dyn: dyn, Logs: func(_ context.Context, _, pod string, follow bool, _ int64) (io.ReadCloser, error) {
		asked = append(asked, follow)
		if pod != "m-janitor-0123456789-abcde" {
			t.Errorf("the log of %s, not the Job's pod", pod)
		}
		return io.NopCloser(strings.NewReader("panic: \x07bell\n")), nil
	}}
	var out bytes.Buffer
	job, code, err := plugin.FollowJob(context.Background(), c, &out, "ns", "m-janitor-0123456789", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, why := plugin.JobEnd(job); ok || why != "BackoffLimitExceeded" || code != 3 {
		t.Errorf("succeeded %v (%s), code %d", ok, why, code)
	}
	if !strings.Contains(out.String(), "(its last 1000 lines, at most 64 KiB) ---\npanic: \\abell\n") || len(asked) != 1 || asked[0] {
		t.Errorf("output:\n%s\nlogs asked %v (want one tail)", out.String(), asked)
	}
}
