package server

// Benchmarks of the HTTP face. None asserts a time: they are run by hand
// (make bench, or the commands in BENCHMARKS.md) and read as ratios.
//
//	BenchmarkHTTP/<fixture>      the whole handler (router, metrics, log line)
//	BenchmarkFloor/<fixture>     the floor: body -> map[string]any -> JSON
//	BenchmarkRequestHeap/<body>  the handler's peak live heap, for the budget's cost model
//
// <fixture> is every recorded sync request in ../testdata/metacontroller,
// plus "large-100-children" (the all-ready request grown to 100 children)
// and "large-100-children-invalid-spec" (the same with a spec the hook
// cannot honour, so that every child takes the last-applied path).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/floor"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// benchBodies are the request bodies every benchmark runs on
// (testbodies.Bench).
func benchBodies(t testing.TB) []testbodies.Named {
	t.Helper()
	bodies, err := testbodies.Bench(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

// BenchmarkHTTP is the whole /sync handler as main.go serves it (router,
// panic recovery, size limit, metrics, one JSON log line), called in
// process: no socket, so it is the hook's own cost.
func BenchmarkHTTP(b *testing.B) {
	h := New(testEnv(), slog.New(slog.NewJSONHandler(io.Discard, nil)), prometheus.NewRegistry(), Options{}).Handler()
	for _, f := range benchBodies(b) {
		b.Run(f.Name, func(b *testing.B) {
			benchHandler(b, h, f.Body)
		})
	}
}

// BenchmarkFloor is what the hook is compared with in tools/loadtest: a
// handler that only decodes the body into map[string]any and encodes it
// back. It is the cost of reading and writing JSON of that size at all.
func BenchmarkFloor(b *testing.B) {
	for _, f := range benchBodies(b) {
		b.Run(f.Name, func(b *testing.B) {
			benchHandler(b, floor.Handler(wire.MaxBodyBytes), f.Body)
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
		bodies = append(bodies, body{name: f.Name, body: f.Body})
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
		basePeak = max(basePeak, testbodies.PeakLive(run(base)))
	}
	for _, f := range bodies {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak int64
			for b.Loop() {
				peak = max(peak, testbodies.PeakLive(run(f.body)))
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

func decodeRequest(t testing.TB, body []byte) *wire.SyncRequest {
	t.Helper()
	var req wire.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return &req
}
