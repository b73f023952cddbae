package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/internal/restorerecord"
)

// While kubectl monocle restore's record is on a Monocle, Ready is False,
// Restoring, at its step, whatever the components say (the API is at 0
// replicas, so "ready"); nothing else of the answer changes, and without
// the record Ready is what it was.
func TestReadyWhileRestoring(t *testing.T) {
	spec := withSpec(t, `{"api":{"replicas":0},"crawler":{"enabled":false}}`)
	c := converged(t)
	c.parent = setSpec(t, c.parent, spec)
	c.apply(t, syncJSON(t, c.request(t)))
	c.markReady()
	plain := c.request(t)
	before := syncJSON(t, plain)
	if r := decodeAnswer(t, before).Status.Condition(condition.ConditionReady); r.Reason != condition.ReasonAllComponentsReady {
		t.Fatalf("before the restore: Ready %+v", r)
	}
	record := func(step restorerecord.Step) string {
		r := restorerecord.Record{MonocleUID: string(plain.Parent.Metadata.UID), Snapshot: "monocle-20261130-030000", Repository: "monocle",
			Location: "/usr/share/elasticsearch/snapshots", Step: step, Before: &restorerecord.Before{}}
		if step != restorerecord.Stopping {
			r.JobUID = "5f1c9a2e-7b3d-4e8a-a6c0-2d9b8e7f1a34"
		}
		return r.Encode()
	}
	with := func(value string) []byte {
		req := c.request(t)
		req.Parent.Metadata.Annotations = map[string]string{restorerecord.Annotation: value}
		return syncJSON(t, req)
	}
	for _, step := range restorerecord.Steps {
		body := with(record(step))
		a := decodeAnswer(t, body)
		ready := a.Status.Condition(condition.ConditionReady)
		if ready.Status != metav1.ConditionFalse || ready.Reason != condition.ReasonRestoring ||
			!strings.Contains(ready.Message, `a restore of snapshot "monocle-20261130-030000" of repository "monocle" is under way, at step `+string(step)+": ") ||
			restoreSteps[step] == "" || !strings.Contains(ready.Message, restoreSteps[step]) {
			t.Errorf("%s: Ready %+v", step, ready)
		}
		if !bytes.Equal(childrenOf(t, body), childrenOf(t, before)) {
			t.Errorf("%s: the record changes the children", step)
		}
	}
	if after := syncJSON(t, c.request(t)); !bytes.Equal(after, before) {
		t.Errorf("the record gone, the answer is not what it was:\n%s", firstDiff(string(before), string(after)))
	}

	// What is not this Monocle's record is said, escaped, and ignored.
	other := strings.Replace(record(restorerecord.Restoring), string(plain.Parent.Metadata.UID), "0b6e1f3c-2a8d-4c51-9e0f-7d3a5b2c1e90", 1)
	for name, value := range map[string]string{
		"not JSON":          "restoring",
		"another form":      strings.Replace(record(restorerecord.Restoring), `"step"`, `"Step"`, 1),
		"a terminal escape": strings.Replace(record(restorerecord.Restoring), "monocle-20261130-030000", "\x1b]8;;http://evil\x07x", 1),
		"another Monocle's": other,
		"a command":         strings.Replace(record(restorerecord.Restoring), `"monocleUID"`, `"kubectl delete ns default"`, 1),
		"too long":          strings.Repeat("x", restorerecord.MaxLength+1),
	} {
		body := with(value)
		ready := decodeAnswer(t, body).Status.Condition(condition.ConditionReady)
		if ready.Status != metav1.ConditionTrue || ready.Reason != condition.ReasonAllComponentsReady ||
			!strings.Contains(ready.Message, "; note: annotation "+restorerecord.Annotation+" is ignored: ") {
			t.Errorf("%s: Ready %+v", name, ready)
		}
		if !bytes.Equal(childrenOf(t, body), childrenOf(t, before)) {
			t.Errorf("%s: the children change", name)
		}
	}
}

func childrenOf(t *testing.T, body []byte) []byte {
	t.Helper()
	var a struct{ Children json.RawMessage }
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	return a.Children
}
