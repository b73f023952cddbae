package hook

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
)

// Ready says why a Monocle does not serve: a component its spec's refusal
// holds or withholds makes Ready that refusal, and is not rolling out; a
// running Monocle whose edit is refused serves its last applied state and
// stays Ready. Fixed, the conditions go back to the components' own state.
// Each step's whole answer is a golden file.
func TestReadySaysWhy(t *testing.T) {
	const (
		invalidSpec   = `{"image":"quay.io/x:1\f"}`
		refusedConfig = `{"config":"workspaces:\n  - name: my team\n"}`
	)
	type want struct {
		ready, readyReason, progressing, progressingReason string
		says                                               string // in Ready's message
	}
	notReady := func(reason, progressing, progressingReason, says string) want {
		return want{"False", reason, progressing, progressingReason, says}
	}
	steps := []struct {
		golden string
		spec   string
		new    bool // a new Monocle (else: converged with baseSpec)
		ready  bool // the workloads marked ready before the answer
		want   want
	}{
		// No child is made: every component waits for the spec.
		{golden: "ready-new-invalid-spec", spec: invalidSpec, new: true,
			want: notReady(condition.ReasonInvalidSpec, "False", condition.ReasonSpecNotApplied, "elastic not made, api not made: spec.image")},
		// Elasticsearch rolls out; the API and the crawler are not made.
		{golden: "new-parent-config-invalid", spec: refusedConfig, new: true,
			want: notReady(condition.ReasonConfigInvalid, "True", "RollingOut", "api not made, crawler not made: spec.config config.yaml is refused by Monocle")},
		// Fixed: the components' own state.
		{golden: "ready-new-config-fixed", spec: `{"config":"workspaces:\n  - name: my-team\n    crawlers: []\n"}`, new: true,
			want: notReady("ComponentsNotReady", "True", "RollingOut", "waiting for elastic, api, crawler")},
		{golden: "new-parent-crawler-token-missing", spec: configSpec(t, githubConfig, ""), new: true,
			want: notReady(condition.ReasonCrawlerTokenMissing, "True", "RollingOut", "crawler not made: workspaces[0].crawlers[0] reads GITHUB_TOKEN")},
		// Elasticsearch and the API ready: only the held crawler waits.
		{golden: "ready-new-crawler-held-rest-ready", spec: configSpec(t, githubConfig, ""), new: true, ready: true,
			want: notReady(condition.ReasonCrawlerTokenMissing, "False", condition.ReasonSpecNotApplied, "crawler not made: ")},
		// Running: the last applied state serves; Progressing says what
		// is held.
		{golden: "ready-steady-invalid-spec", spec: invalidSpec,
			want: want{"True", condition.ReasonAllComponentsReady, "False", condition.ReasonSpecNotApplied, "every component is ready"}},
		{golden: "steady-config-invalid", spec: withSpec(t, `{"config":"workspaces:\n  - name: demo\n    crawlers:\n      - name: x\n"}`),
			want: want{"True", condition.ReasonAllComponentsReady, "False", condition.ReasonSpecNotApplied, "every component is ready"}},
		{golden: "ready-steady-crawler-token-missing", spec: configSpec(t, githubConfig, ""),
			want: want{"True", condition.ReasonAllComponentsReady, "False", condition.ReasonSpecNotApplied, "every component is ready"}},
	}
	for _, step := range steps {
		t.Run(step.golden, func(t *testing.T) {
			var body []byte
			switch {
			case step.new && step.ready:
				c := newCluster(t, readFixture(t, "sync-v1-new-parent"))
				c.parent = setSpec(t, c.parent, step.spec)
				c.apply(t, syncJSON(t, c.request(t)))
				c.markReady()
				body = syncJSON(t, c.request(t))
			case step.new:
				req := fixture(t, "sync-v1-new-parent")
				req.Parent.Spec = json.RawMessage(step.spec)
				body = syncJSON(t, req)
			default:
				body = syncJSON(t, steady(t, step.spec))
			}
			golden(t, step.golden, body)
			a := decodeAnswer(t, body)
			ready, progressing := a.Status.Condition(condition.ConditionReady), a.Status.Condition(condition.ConditionProgressing)
			got := want{string(ready.Status), ready.Reason, string(progressing.Status), progressing.Reason, ""}
			if w := step.want; got.ready != w.ready || got.readyReason != w.readyReason || got.progressing != w.progressing || got.progressingReason != w.progressingReason ||
				!strings.Contains(ready.Message, w.says) {
				t.Errorf("Ready %s %s %q, Progressing %s %s %q; want %+v", ready.Status, ready.Reason, ready.Message, progressing.Status, progressing.Reason, progressing.Message, w)
			}
			checkReadyIsSpecApplied(t, a.Status.Conditions)
		})
	}
}

// checkReadyIsSpecApplied: a Ready that is not ComponentsNotReady nor
// AllComponentsReady is a refusal SpecApplied says too, so that one
// problem pages once (observability/rules.yaml: MonocleNotReady leaves it
// to MonocleSpecNotApplied).
func checkReadyIsSpecApplied(t *testing.T, conds []metav1.Condition) {
	t.Helper()
	var ready, spec metav1.Condition
	for _, c := range conds {
		switch c.Type {
		case condition.ConditionReady:
			ready = c
		case condition.ConditionSpecApplied:
			spec = c
		}
	}
	if ready.Reason == condition.ReasonComponentsNotReady || ready.Reason == condition.ReasonAllComponentsReady || ready.Reason == condition.ReasonRestoring {
		return
	}
	_, refusal, _ := strings.Cut(ready.Message, ": ")
	if i := strings.LastIndex(refusal, "; waiting for "); i >= 0 {
		refusal = refusal[:i]
	}
	if spec.Status != metav1.ConditionFalse || refusal == "" || !strings.Contains(spec.Message, refusal) {
		t.Errorf("Ready %s %q is not what SpecApplied says: %s %s %q", ready.Reason, ready.Message, spec.Status, spec.Reason, spec.Message)
	}
}

// During a rollout of a new image, the status keeps the image of the last
// complete rollout (its old pods serve it): IMAGE is never blank; once the
// rollout is complete, it is the new one.
func TestImageDuringARollout(t *testing.T) {
	const old, next = "quay.io/change-metrics/monocle:1.11.2", "quay.io/change-metrics/monocle:1.11.3"
	c := converged(t)
	a := decodeAnswer(t, syncJSON(t, c.request(t)))
	if a.Status.Versions == nil || a.Status.Versions.Monocle != old {
		t.Fatalf("converged: versions %+v", a.Status.Versions)
	}
	last := a.Status.Versions
	c.parent = setSpec(t, c.parent, strings.Replace(baseSpec, old, next, 1))
	c.apply(t, syncJSON(t, c.request(t)))
	req := c.request(t)
	req.Parent.Status.Versions = last
	rolling := decodeAnswer(t, syncJSON(t, req))
	if rolling.Status.API != "In Progress" || rolling.Status.Versions == nil || rolling.Status.Versions.Monocle != old {
		t.Errorf("rolling out: api %s, versions %+v; want %s", rolling.Status.API, rolling.Status.Versions, old)
	}
	c.markReady()
	req = c.request(t)
	req.Parent.Status.Versions = rolling.Status.Versions
	if done := decodeAnswer(t, syncJSON(t, req)); done.Status.Versions.Monocle != next {
		t.Errorf("rolled out: versions %+v; want %s", done.Status.Versions, next)
	}
}
