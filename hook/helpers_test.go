package hook

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/mcapply"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testNow is the clock every test runs with.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testImage is the hook's image in every test.
const testImage = "ghcr.io/change-metrics/monocle-hook:v0.0.0-test"

// testEnv fixes the clock, the random source and the hook's image: same
// input, same bytes.
func testEnv() Env {
	return Env{Now: func() time.Time { return testNow }, Rand: rand.NewChaCha8([32]byte{42}), Image: testImage}
}

func fixtureNames(t testing.TB) []string {
	files, err := filepath.Glob("testdata/metacontroller/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var names []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if !strings.HasPrefix(name, "customize") { // not a sync request
			names = append(names, name)
		}
	}
	return names
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/metacontroller", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeRequest(t testing.TB, body []byte) *wire.SyncRequest {
	t.Helper()
	var req wire.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("decoding request: %v", err)
	}
	return &req
}

func fixture(t testing.TB, name string) *wire.SyncRequest {
	return decodeRequest(t, readFixture(t, name))
}

// syncJSON answers req and returns the answer as /sync sends it.
func syncJSON(t testing.TB, req *wire.SyncRequest) []byte {
	t.Helper()
	resp, err := Sync(req, testEnv())
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	checkPrinted(t, resp.Status.Conditions)
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answer is a decoded /sync answer.
type answer struct {
	Status   answerStatus     `json:"status"`
	Children []map[string]any `json:"children"`
}

func decodeAnswer(t testing.TB, b []byte) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a answer) child(kind, name string) map[string]any {
	for _, c := range a.Children {
		if c["kind"] == kind && nestedString(c, "metadata", "name") == name {
			return c
		}
	}
	return nil
}

func (a answer) names() []string {
	var out []string
	for _, c := range a.Children {
		out = append(out, c["kind"].(string)+"/"+nestedString(c, "metadata", "name"))
	}
	slices.Sort(out)
	return out
}

func nestedString(obj map[string]any, path ...string) string {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata/golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./hook -update to write it)", err)
	}
	if !bytes.Equal(want, pretty.Bytes()) {
		t.Errorf("answer differs from %s (run go test ./hook -update and review the diff):\n%s", path, firstDiff(string(want), pretty.String()))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n- " + wl + "\n+ " + gl
		}
	}
	return ""
}

// cluster plays Metacontroller's part for one parent: it applies an answer
// to the observed children the way Metacontroller's default apply does, and
// builds the next request from what it stored. It reports which children
// it created, updated and deleted.
type cluster struct {
	parent   json.RawMessage
	uid      string
	ns       string
	children map[string]map[string]map[string]any // type key -> name -> object
}

func newCluster(t testing.TB, req []byte) *cluster {
	t.Helper()
	var raw struct {
		Parent   json.RawMessage                      `json:"parent"`
		Children map[string]map[string]map[string]any `json:"children"`
	}
	if err := json.Unmarshal(req, &raw); err != nil {
		t.Fatal(err)
	}
	var p wire.Parent
	if err := json.Unmarshal(raw.Parent, &p); err != nil {
		t.Fatal(err)
	}
	c := &cluster{parent: raw.Parent, uid: string(p.Metadata.UID), ns: p.Metadata.Namespace, children: map[string]map[string]map[string]any{}}
	for typ, objs := range raw.Children {
		c.children[typ] = map[string]map[string]any{}
		for _, o := range objs {
			c.children[typ][nestedString(o, "metadata", "name")] = o
		}
	}
	return c
}

func typeKey(obj map[string]any) string {
	apiVersion := obj["apiVersion"].(string)
	return obj["kind"].(string) + "." + apiVersion
}

// request is the sync request Metacontroller would send next.
func (c *cluster) request(t testing.TB) *wire.SyncRequest {
	t.Helper()
	body, err := json.Marshal(map[string]any{"parent": c.parent, "children": c.children})
	if err != nil {
		t.Fatal(err)
	}
	return decodeRequest(t, body)
}

// apply stores an answer; jobs follow OnDelete (never updated), the rest
// InPlace, as metacontroller/ declares them.
func (c *cluster) apply(t testing.TB, answerJSON []byte) (created, updated, deleted []string) {
	t.Helper()
	a := decodeAnswer(t, answerJSON)
	desired := map[string]map[string]any{}
	for _, d := range a.Children {
		// Metacontroller labels each child with its parent's uid and gives
		// it the parent's namespace before applying it.
		md := d["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		labels["controller-uid"] = c.uid
		if md["namespace"] == nil {
			md["namespace"] = c.ns
		}
		key := typeKey(d) + "/" + md["name"].(string)
		desired[key] = d
		typ, name := typeKey(d), md["name"].(string)
		if c.children[typ] == nil {
			c.children[typ] = map[string]map[string]any{}
		}
		obs := c.children[typ][name]
		if obs == nil {
			stored := mustCopy(t, d)
			if err := mcapply.SetLastApplied(stored, d); err != nil {
				t.Fatal(err)
			}
			stored["metadata"].(map[string]any)["uid"] = "uid-" + name
			c.children[typ][name] = stored
			created = append(created, key)
			continue
		}
		merged, changed, err := mcapply.Update(obs, d)
		if err != nil {
			t.Fatal(err)
		}
		if gen, ok := merged["metadata"].(map[string]any)["generation"].(float64); ok && !reflect.DeepEqual(merged["spec"], obs["spec"]) {
			// The API server counts spec changes.
			merged["metadata"].(map[string]any)["generation"] = gen + 1
		}
		if changed && d["kind"] != "Job" {
			c.children[typ][name] = merged
			updated = append(updated, key)
		}
	}
	for typ, objs := range c.children {
		for name, o := range objs {
			if desired[typeKey(o)+"/"+name] == nil {
				delete(objs, name)
				deleted = append(deleted, typ+"/"+name)
			}
		}
	}
	slices.Sort(created)
	slices.Sort(updated)
	slices.Sort(deleted)
	return created, updated, deleted
}

func mustCopy(t testing.TB, v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type (
	batchJob          = batchv1.Job
	batchJobStatus    = batchv1.JobStatus
	batchJobCondition = batchv1.JobCondition
)

// answerStatus is an answer's status, with the tests' accessors.
type answerStatus struct{ v1alpha1.MonocleStatus }

func (s answerStatus) Refused() *metav1.Condition { return condition.Refused(s.MonocleStatus) }

// Condition is the condition of type t, or an empty one.
func (s answerStatus) Condition(t string) metav1.Condition {
	if c := meta.FindStatusCondition(s.Conditions, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// setSpec replaces a raw parent's spec.
func setSpec(t testing.TB, parent json.RawMessage, spec string) json.RawMessage {
	var p map[string]any
	if err := json.Unmarshal(parent, &p); err != nil {
		t.Fatal(err)
	}
	p["spec"] = json.RawMessage(spec)
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// markReady plays the workload controllers: every workload has rolled out
// and is ready, every Job is complete.
func (c *cluster) markReady() {
	for typ, objs := range c.children {
		for _, o := range objs {
			switch typ {
			case "Deployment.apps/v1", "StatefulSet.apps/v1":
				replicas := float64(1)
				if r, ok := o["spec"].(map[string]any)["replicas"].(float64); ok {
					replicas = r
				}
				gen := float64(1)
				if g, ok := o["metadata"].(map[string]any)["generation"].(float64); ok {
					gen = g
				}
				o["status"] = map[string]any{"observedGeneration": gen, "replicas": replicas,
					"updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}
			case "Job.batch/v1":
				o["status"] = map[string]any{"succeeded": 1, "conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
			}
		}
	}
}

// markNotReady plays a rollout under way: every workload's controller has
// seen its spec, and no replica is ready yet.
func (c *cluster) markNotReady() {
	c.markReady()
	for _, typ := range []string{"Deployment.apps/v1", "StatefulSet.apps/v1"} {
		for _, o := range c.children[typ] {
			st := o["status"].(map[string]any)
			st["readyReplicas"], st["availableReplicas"] = 0, 0
		}
	}
}
