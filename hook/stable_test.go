package hook

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
)

// Metacontroller writes the status again whenever it differs: the same
// request must give the same bytes, however often and in whatever order it
// is synced in one process (Go's map iteration differs from one range to
// the next), and the status may move only when something observed moves.

// syncs is how many times each request is synced: enough that an answer
// taken from a map's first key differs (the issue saw 25 answers in 50).
const syncs = 50

// Every golden request (the Metacontroller fixtures) and a random corpus
// of specs with several problems each, synced many times: one answer each.
func TestSameRequestSameBytes(t *testing.T) {
	requests := map[string][]byte{}
	for _, name := range fixtureNames(t) {
		requests[name] = readFixture(t, name)
	}
	base := readFixture(t, "sync-v1-observed-children")
	r := rand.New(rand.NewPCG(34, 34))
	for i := range 40 {
		requests[fmt.Sprintf("random %d", i)] = withParentSpec(t, base, randomSpec(r))
	}
	for name, body := range requests {
		first := syncJSON(t, decodeRequest(t, body))
		for range syncs - 1 {
			if again := syncJSON(t, decodeRequest(t, body)); string(again) != string(first) {
				t.Fatalf("%s: the same request gave two answers:\n%s", name, firstDiff(string(first), string(again)))
			}
		}
	}
}

// randomSpec is a spec with several of the problems a message lists, in
// random numbers: bad annotation keys and values, node selector labels,
// tolerations, and a config with several refused workspaces.
func randomSpec(r *rand.Rand) string {
	annotations := map[string]string{}
	for i := range r.IntN(8) {
		switch r.IntN(3) {
		case 0:
			annotations[fmt.Sprintf("bad key %d/x", i)] = "v"
		case 1:
			annotations[fmt.Sprintf("-bad%d", i)] = "v"
		default:
			annotations[fmt.Sprintf("good.example.com/k%d", i)] = strings.Repeat("v", r.IntN(3))
		}
	}
	selector := map[string]string{}
	for i := range r.IntN(6) {
		selector[fmt.Sprintf("k%d", i)] = []string{"ok", "bad value", "-bad", strings.Repeat("x", 64)}[r.IntN(4)]
	}
	var workspaces []string
	for i := range r.IntN(5) {
		workspaces = append(workspaces, fmt.Sprintf("  - {name: %s, crawlers: []}\n", []string{"ok", "Bad", "a b", "x"}[r.IntN(4)]+fmt.Sprint(i)))
	}
	// Each other part only now and then: a problem in a field before
	// the Ingress's would name that field first.
	spec := map[string]any{"ingress": map[string]any{"host": "m.example.com", "annotations": annotations}}
	if r.IntN(3) == 0 {
		spec["nodeSelector"] = selector
	}
	if len(workspaces) > 0 && r.IntN(3) == 0 {
		spec["config"] = "workspaces:\n" + strings.Join(workspaces, "")
	}
	if r.IntN(3) == 0 {
		spec["tolerations"] = []any{map[string]any{"key": "bad key", "operator": "Exists", "value": "x"}}
	}
	b, _ := json.Marshal(spec)
	return string(b)
}

// withParentSpec is a sync request's body with the parent's spec replaced.
func withParentSpec(t *testing.T, body []byte, spec string) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var s any
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	req["parent"].(map[string]any)["spec"] = s
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The status moves only when something observed moves: with the clock
// going on from one sync to the next and the last status fed back, as
// Metacontroller does, the snapshot condition stays the same bytes. An
// "@every" schedule's message holds no time computed from the clock; a
// cron schedule's due time moves at most once a period.
func TestStatusStillAsTheClockMoves(t *testing.T) {
	for name, tc := range map[string]struct {
		schedule, lastSuccess, reason string
		step                          time.Duration
	}{
		"@every 6h, no recent snapshot":   {"@every 6h", "2026-11-29T20:00:00Z", "NoRecentSnapshot", 7 * time.Second},
		"@every 1m, no recent snapshot":   {"@every 1m", "2026-11-29T20:00:00Z", "NoRecentSnapshot", 7 * time.Second},
		"@every 6h, a recent snapshot":    {"@every 6h", "2026-11-30T11:00:00Z", "SnapshotSucceeded", 7 * time.Second},
		"daily, no recent snapshot":       {"0 3 * * *", "2026-11-20T03:05:00Z", "NoRecentSnapshot", 7 * time.Second},
		"hourly, a minute a sync (moves)": {"0 * * * *", "2026-11-20T03:05:00Z", "NoRecentSnapshot", time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			c := convergedWith(t, withSpec(t, `{"elasticsearch":{"snapshots":{"schedule":"`+tc.schedule+`","keep":3}}}`))
			var cj batchv1.CronJob
			remarshal(t, c.children["CronJob.batch/v1"]["monocle-sample-snapshots"], &cj)
			success, err := time.Parse(time.RFC3339, tc.lastSuccess)
			if err != nil {
				t.Fatal(err)
			}
			cj.Status.LastSuccessfulTime = &metav1.Time{Time: success}
			cj.CreationTimestamp = metav1.Time{Time: success.Add(-time.Hour)}
			req := c.request(t)
			req.Children.CronJobs = map[string]*batchv1.CronJob{cj.Name: &cj}
			now := testNow
			env := testEnv()
			env.Now = func() time.Time { return now }
			var seen []string
			for range syncs {
				resp, err := Sync(req, env)
				if err != nil {
					t.Fatal(err)
				}
				req.Parent.Status.Conditions = resp.Status.Conditions
				h := answerStatus{resp.Status}.Condition(condition.ConditionSnapshotsHealthy)
				if h.Reason != tc.reason {
					t.Fatalf("SnapshotsHealthy %+v, want %s", h, tc.reason)
				}
				b, _ := json.Marshal(h)
				if len(seen) == 0 || seen[len(seen)-1] != string(b) {
					seen = append(seen, string(b))
				}
				now = now.Add(tc.step)
			}
			// At most once a period: an hourly schedule synced a minute
			// apart for fifty minutes may move once.
			want := 1
			if tc.step == time.Minute {
				want = 2
			}
			if len(seen) > want {
				t.Errorf("SnapshotsHealthy took %d values in %d syncs %s apart, want at most %d:\n%s", len(seen), syncs, tc.step, want, strings.Join(seen, "\n"))
			}
		})
	}
}
