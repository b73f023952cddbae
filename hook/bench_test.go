package hook

// Benchmarks of the hook's hot path. None asserts a time: they are run by
// hand (make bench, or the commands in BENCHMARKS.md) and their figures are
// read as ratios, since the machines they run on are shared and noisy.
//
//	BenchmarkSync/<fixture>              Sync alone, on an already decoded request
//	BenchmarkDecode/<fixture>            json.Unmarshal of the body into SyncRequest
//	BenchmarkEncode/<fixture>            json.Marshal of Sync's answer
//	BenchmarkDecodeSyncEncode/<fixture>  the three, as /sync does them
//	BenchmarkHTTP/<fixture>              the whole handler (router, metrics, log line)
//	BenchmarkFloor/<fixture>             the floor: body -> map[string]any -> JSON
//	BenchmarkRequestHeap/<body>          the handler's peak live heap, for the budget's cost model
//
// <fixture> is every recorded sync request in testdata/metacontroller, plus
// "large-100-children" (the all-ready request grown to 100 children) and
// "large-100-children-invalid-spec" (the same with a spec the hook cannot
// honour, so that every child takes the last-applied path).

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/floor"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// benchBody is one request body the benchmarks run on.
type benchBody struct {
	name string
	body []byte
}

// benchBodies are the request bodies every benchmark runs on, in a fixed
// order.
func benchBodies(t testing.TB) []benchBody {
	t.Helper()
	var out []benchBody
	for _, name := range fixtureNames(t) {
		out = append(out, benchBody{name, readFixture(t, name)})
	}
	return append(out,
		benchBody{"large-100-children", largeRequest(t, 100, false)},
		benchBody{"large-100-children-invalid-spec", largeRequest(t, 100, true)})
}

// largeRequest grows the all-ready request (8 children: the seven the hook
// answers and one update-idents Job) to total children: Jobs of older
// idents (answered as deleted), and then Secrets and ConfigMaps named with
// the instance's prefix (not the hook's, so left out of the answer too).
// Each copy gets its own name, uid and last-applied annotation. With
// invalidSpec the parent's storageSize is not a quantity: Sync then answers
// every child as last applied.
func largeRequest(b testing.TB, total int, invalidSpec bool) []byte {
	b.Helper()
	var req map[string]any
	if err := json.Unmarshal(readFixture(b, "sync-v1-all-ready-job-complete"), &req); err != nil {
		b.Fatal(err)
	}
	children := req["children"].(map[string]any)
	count := 0
	for _, objs := range children {
		count += len(objs.(map[string]any))
	}
	template := func(typ string) map[string]any {
		for _, o := range children[typ].(map[string]any) {
			return o.(map[string]any)
		}
		b.Fatalf("no %s in the fixture", typ)
		return nil
	}
	job, secret, configMap := template("Job.batch/v1"), template("Secret.v1"), template("ConfigMap.v1")
	add := func(typ string, tmpl map[string]any, name string) {
		o := mustCopy(b, tmpl)
		md := o["metadata"].(map[string]any)
		md["name"] = name
		md["uid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", count)
		if ann, ok := md["annotations"].(map[string]any); ok {
			if la, ok := ann[lastAppliedAnnotation].(string); ok {
				var applied map[string]any
				if err := json.Unmarshal([]byte(la), &applied); err != nil {
					b.Fatal(err)
				}
				applied["metadata"].(map[string]any)["name"] = name
				enc, _ := json.Marshal(applied)
				ann[lastAppliedAnnotation] = string(enc)
			}
		}
		children[typ].(map[string]any)[name] = o
		count++
	}
	// About two thirds Jobs, the rest Secrets and ConfigMaps in turn.
	jobs := (total - count) * 2 / 3
	for i := 0; i < jobs; i++ {
		add("Job.batch/v1", job, fmt.Sprintf("monocle-sample-update-idents-%010x", 0xa000000000+i))
	}
	for i := 0; count < total; i++ {
		if i%2 == 0 {
			add("Secret.v1", secret, fmt.Sprintf("monocle-sample-extra-%03d", i))
		} else {
			add("ConfigMap.v1", configMap, fmt.Sprintf("monocle-sample-extra-%03d", i))
		}
	}
	if invalidSpec {
		req["parent"].(map[string]any)["spec"].(map[string]any)["storageSize"] = "a lot"
	}
	body, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

var writeLarge = flag.String("write-large", "", "TestLargeRequest writes the large request here, e.g. for tools/loadtest -body")

// TestLargeRequest checks what the large benchmarks measure: 100 observed
// children, the usual answer for the valid spec, every child for the
// invalid one.
func TestLargeRequest(t *testing.T) {
	for _, invalid := range []bool{false, true} {
		body := largeRequest(t, 100, invalid)
		req := decodeRequest(t, body)
		c := req.Children
		observed := len(c.Secrets) + len(c.ConfigMaps) + len(c.Services) + len(c.StatefulSets) + len(c.Deployments) + len(c.Jobs)
		if observed != 100 {
			t.Errorf("invalid=%v: %d observed children, want 100", invalid, observed)
		}
		a := decodeAnswer(t, syncJSON(t, req))
		want := 8
		if invalid {
			want = 100
		}
		if len(a.Children) != want {
			t.Errorf("invalid=%v: %d children answered, want %d", invalid, len(a.Children), want)
		}
		names := a.names()
		for i := 1; i < len(names); i++ {
			if names[i] == names[i-1] {
				t.Errorf("invalid=%v: %s answered twice", invalid, names[i])
			}
		}
		t.Logf("invalid=%v: request %d bytes, answer %d children", invalid, len(body), len(a.Children))
		if *writeLarge != "" && !invalid {
			if err := os.WriteFile(*writeLarge, body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func BenchmarkSync(b *testing.B) {
	for _, f := range benchBodies(b) {
		req := decodeRequest(b, f.body)
		env := testEnv()
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sync(req, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, f := range benchBodies(b) {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(f.body)))
			for b.Loop() {
				var req wire.SyncRequest
				if err := json.Unmarshal(f.body, &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, f := range benchBodies(b) {
		resp, err := Sync(decodeRequest(b, f.body), testEnv())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeSyncEncode(b *testing.B) {
	for _, f := range benchBodies(b) {
		env := testEnv()
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(f.body)))
			for b.Loop() {
				var req wire.SyncRequest
				if err := json.Unmarshal(f.body, &req); err != nil {
					b.Fatal(err)
				}
				resp, err := Sync(&req, env)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHTTP is the whole /sync handler as main.go serves it (router,
// panic recovery, size limit, metrics, one JSON log line), called in
// process: no socket, so it is the hook's own cost.
func BenchmarkHTTP(b *testing.B) {
	h := New(testEnv(), slog.New(slog.NewJSONHandler(io.Discard, nil)), prometheus.NewRegistry(), Options{}).Handler()
	for _, f := range benchBodies(b) {
		b.Run(f.name, func(b *testing.B) {
			benchHandler(b, h, f.body)
		})
	}
}

// BenchmarkFloor is what the hook is compared with in tools/loadtest: a
// handler that only decodes the body into map[string]any and encodes it
// back. It is the cost of reading and writing JSON of that size at all.
func BenchmarkFloor(b *testing.B) {
	for _, f := range benchBodies(b) {
		b.Run(f.name, func(b *testing.B) {
			benchHandler(b, floor.Handler(MaxBodyBytes), f.body)
		})
	}
}

func benchHandler(b *testing.B, h http.Handler, body []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	rd := bytes.NewReader(body)
	for b.Loop() {
		rd.Reset(body)
		req := httptest.NewRequest(http.MethodPost, "/sync", rd)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkLastApplied is the invalid-spec path on the large request's 100
// observed children.
func BenchmarkLastApplied(b *testing.B) {
	objs := wire.Observe(decodeRequest(b, largeRequest(b, 100, true)).Children, "").All()
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range objs {
			if _, err := lastAppliedChild(c.Object, c.Type); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRequestHeap measures what the memory budget's cost model
// (budget.go) estimates: the peak live heap of the whole /sync handler
// against the body, and against the config for bodies with a large one.
// Each run of the handler is sampled with the GC at GOGC=1, so that the
// live heap it reads after each cycle follows the handler's own; the
// largest sample over the runs is reported (peak-B; per body byte:
// peak/body; per config byte, beyond the same request without the config:
// peak/config), and what the budget charges the request against it
// (charged/peak: above 1, the estimate covers the peak). B/op is -benchmem's: every byte allocated, garbage
// included, an upper bound of the peak. Run it with -benchtime 5x or so:
// GOGC=1 makes each run slow.
func BenchmarkRequestHeap(b *testing.B) {
	h := New(testEnv(), slog.New(slog.NewJSONHandler(io.Discard, nil)), prometheus.NewRegistry(), Options{}).Handler()
	run := func(body []byte) func() {
		return func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d: %.200s", rec.Code, rec.Body.String())
			}
		}
	}
	type body struct {
		name   string
		body   []byte
		config int // the config's size, for bodies made with one
	}
	var bodies []body
	for _, f := range benchBodies(b) {
		bodies = append(bodies, body{name: f.name, body: f.body})
	}
	base := readFixture(b, "sync-v1-observed-children")
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
		config := testbodies.Config(size)
		withConfig, err := testbodies.WithSpec(base, "config", config)
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body{name: fmt.Sprintf("config-%dKiB", size>>10), body: withConfig, config: len(config)})
	}
	var basePeak int64
	for range 5 {
		basePeak = max(basePeak, peakLive(run(base)))
	}
	for _, f := range bodies {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak int64
			for b.Loop() {
				peak = max(peak, peakLive(run(f.body)))
			}
			b.ReportMetric(float64(peak), "peak-B")
			b.ReportMetric(float64(peak)/float64(len(f.body)), "peak/body")
			b.ReportMetric(float64(charged(b, f.body))/float64(peak), "charged/peak")
			if f.config > 0 {
				b.ReportMetric(float64(peak-basePeak)/float64(f.config), "peak/config")
			}
		})
	}
}

// charged is what the budget charges the body's request in all: its
// buffer as readBody grows it, its bytes, and syncCost.
func charged(b *testing.B, body []byte) int64 {
	budget := NewBudget(1<<40, time.Second)
	c := budget.claim(nil)
	defer c.release()
	buf, err := readBody(b.Context(), bytes.NewReader(body), int64(len(body)), c)
	if err != nil {
		b.Fatal(err)
	}
	defer putBuffer(buf)
	if err := c.grow(b.Context(), syncCost(decodeRequest(b, buf)), true); err != nil {
		b.Fatal(err)
	}
	return budget.InUse()
}

// peakLive runs f with the GC at GOGC=1 and returns how far the live heap
// rose over what it was before, as sampled after each GC cycle.
func peakLive(f func()) int64 {
	runtime.GC()
	live := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(live)
	before := int64(live[0].Value.Uint64())
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	var peak atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			default:
			}
			rtmetrics.Read(s)
			if v := int64(s[0].Value.Uint64()) - before; v > peak.Load() {
				peak.Store(v)
			}
			runtime.Gosched()
		}
	}()
	f()
	close(done)
	<-sampled
	return peak.Load()
}
