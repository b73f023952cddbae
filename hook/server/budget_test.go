package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/hook/wire"
)

// waitUntil polls cond: it orders a test's steps with the server's
// goroutines, and asserts no time (it fails only after 10 s without cond).
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waiting counts the claims waiting for room.
func (b *Budget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.claims {
		if c.want > 0 {
			n++
		}
	}
	return n
}

func TestBudgetGrowAndRelease(t *testing.T) {
	b := NewBudget(1000, time.Millisecond)
	ctx := t.Context()
	c1, c2 := b.claim(nil), b.claim(nil)
	if err := c1.grow(ctx, 600, false); err != nil {
		t.Fatal(err)
	}
	if err := c2.grow(ctx, 400, true); err != nil {
		t.Fatal(err)
	}
	if b.InUse() != 1000 {
		t.Errorf("in use %d, want 1000", b.InUse())
	}
	c1.release()
	c2.release()
	c2.release() // twice is harmless
	if b.InUse() != 0 || len(b.claims) != 0 {
		t.Errorf("in use %d with %d claims after release, want none", b.InUse(), len(b.claims))
	}
}

func TestBudgetRefuses(t *testing.T) {
	tests := map[string]struct {
		held, want int64
		err        error
	}{
		"more than the whole budget, at once": {held: 0, want: 1001, err: errBeyondBudget},
		"more than the whole budget, in all":  {held: 600, want: 401, err: errBeyondBudget},
		"no room within the wait":             {held: 0, want: 500, err: errOverBudget},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := NewBudget(1000, 5*time.Millisecond)
			// An older request computing holds 600: never taken back.
			older := b.claim(nil)
			if err := older.grow(t.Context(), 600, true); err != nil {
				t.Fatal(err)
			}
			c := b.claim(nil)
			if tc.held > 0 {
				older.release()
				if err := c.grow(t.Context(), tc.held, false); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.grow(t.Context(), tc.want, false); !errors.Is(err, tc.err) {
				t.Fatalf("grow: %v, want %v", err, tc.err)
			}
			c.release()
			older.release()
			if b.InUse() != 0 {
				t.Errorf("in use %d after release", b.InUse())
			}
		})
	}
}

// A request waiting for room gets it when an older one is done.
func TestBudgetWaiterGetsRoom(t *testing.T) {
	b := NewBudget(1000, time.Minute)
	older := b.claim(nil)
	if err := older.grow(t.Context(), 800, true); err != nil {
		t.Fatal(err)
	}
	c := b.claim(nil)
	done := make(chan error, 1)
	go func() { done <- c.grow(context.Background(), 500, false) }()
	waitUntil(t, "waiting", func() bool { return b.waiting() == 1 })
	older.release()
	if err := <-done; err != nil {
		t.Fatalf("grow after release: %v", err)
	}
	if b.InUse() != 500 {
		t.Errorf("in use %d, want 500", b.InUse())
	}
}

// An older request that needs room takes it back from younger ones that
// are still reading (they are interrupted and refused), youngest first and
// no more than it needs once the ones computing are done; it waits for
// those, which are left alone.
func TestBudgetOlderTakesRoomBack(t *testing.T) {
	b := NewBudget(1000, time.Minute)
	ctx := t.Context()
	older := b.claim(nil)
	if err := older.grow(ctx, 100, false); err != nil {
		t.Fatal(err)
	}
	var interrupted [3]atomic.Int32
	computing := b.claim(func() { interrupted[0].Add(1) })
	reading1 := b.claim(func() { interrupted[1].Add(1) })
	reading2 := b.claim(func() { interrupted[2].Add(1) })
	for c, n := range map[*claim]int64{computing: 300, reading1: 300, reading2: 300} {
		if err := c.grow(ctx, n, c == computing); err != nil {
			t.Fatal(err)
		}
	}
	// 500 more: 1000 - 300 (computing) - 300 (reading2) is room enough.
	done := make(chan error, 1)
	go func() { done <- older.grow(context.Background(), 500, false) }()
	waitUntil(t, "the youngest refused", reading2.isWounded)
	waitUntil(t, "the older waiting", func() bool { return b.waiting() == 1 })
	if got := []int32{interrupted[0].Load(), interrupted[1].Load(), interrupted[2].Load()}; got[0] != 0 || got[1] != 0 || got[2] != 1 {
		t.Errorf("interrupted (computing, reading1, reading2) = %v, want only the youngest", got)
	}
	if reading1.isWounded() || computing.isWounded() {
		t.Error("the wrong request was refused")
	}
	if err := reading2.grow(ctx, 1, false); !errors.Is(err, errOverBudget) {
		t.Errorf("the refused request grows again: %v", err)
	}
	computing.release()
	if err := <-done; err != nil {
		t.Fatalf("the older request: %v", err)
	}
	if b.InUse() != 900 {
		t.Errorf("in use %d, want 900", b.InUse())
	}
	// Once over, a request is never interrupted: its connection may serve
	// another one.
	reading1.release()
	late := b.claim(nil)
	if err := late.grow(ctx, 400, false); err != nil {
		t.Fatal(err)
	}
	if err := older.grow(ctx, 100, false); err != nil {
		t.Fatalf("the older request: %v", err)
	}
	if !late.isWounded() || interrupted[1].Load() != 0 {
		t.Error("room was taken from a request over, not from the one in flight")
	}
}

// A request that finds the room it needs held by requests computing their
// answer waits for them, and takes nothing from younger ones.
func TestBudgetWaitsForComputingRequests(t *testing.T) {
	b := NewBudget(1000, time.Minute)
	ctx := t.Context()
	older := b.claim(nil)
	if err := older.grow(ctx, 100, false); err != nil {
		t.Fatal(err)
	}
	computing := b.claim(nil)
	if err := computing.grow(ctx, 600, true); err != nil {
		t.Fatal(err)
	}
	var interrupted atomic.Int32
	younger := b.claim(func() { interrupted.Add(1) })
	if err := younger.grow(ctx, 300, false); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- older.grow(context.Background(), 500, false) }()
	waitUntil(t, "the older waiting", func() bool { return b.waiting() == 1 })
	if younger.isWounded() || interrupted.Load() != 0 {
		t.Fatal("the younger request was refused, where the computing one frees enough")
	}
	computing.release()
	if err := <-done; err != nil {
		t.Fatalf("the older request: %v", err)
	}
}

// A younger request does not take room an older one waits for.
func TestBudgetOldestFirst(t *testing.T) {
	b := NewBudget(1000, time.Minute)
	holder := b.claim(nil)
	if err := holder.grow(t.Context(), 900, true); err != nil {
		t.Fatal(err)
	}
	older, younger := b.claim(nil), b.claim(nil)
	olderDone := make(chan error, 1)
	go func() { olderDone <- older.grow(context.Background(), 500, false) }()
	waitUntil(t, "the older waiting", func() bool { return b.waiting() == 1 })
	ctx, cancel := context.WithCancel(t.Context())
	youngerDone := make(chan error, 1)
	go func() { youngerDone <- younger.grow(ctx, 50, false) }()
	waitUntil(t, "both waiting", func() bool { return b.waiting() == 2 })
	// 100 is free: enough for the younger one, but the older one waits.
	cancel()
	if err := <-youngerDone; !errors.Is(err, errOverBudget) {
		t.Errorf("the younger request: %v, want it refused", err)
	}
	holder.release()
	if err := <-olderDone; err != nil {
		t.Errorf("the older request: %v", err)
	}
}

func TestReadBodyGrowsWithWhatArrives(t *testing.T) {
	tests := map[string]struct {
		size, wantCap int
		announced     int64
	}{
		"empty":                 {0, minBodyBuffer, -1},
		"10 bytes":              {10, minBodyBuffer, -1},
		"a full buffer":         {minBodyBuffer, minBodyBuffer, -1},
		"44 KB":                 {44_248, 64 << 10, -1},
		"the largest pool":      {maxPooledBuffer - 1, maxPooledBuffer, -1},
		"421 KB":                {421_000, 2 * maxPooledBuffer, -1},
		"421 KB, announced":     {421_000, 421_000, 421_000},
		"421 KB, 4 MiB claimed": {421_000, 2 * maxPooledBuffer, 4 << 20},
		"1 MiB":                 {1 << 20, 0, -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := NewBudget(1<<30, time.Millisecond)
			c := b.claim(nil)
			defer c.release()
			body := make([]byte, tc.size)
			buf, err := readBody(t.Context(), &trickle{body: body, chunk: 1000}, tc.announced, c)
			if err != nil || len(buf) != tc.size {
				t.Fatalf("read %d bytes, %v", len(buf), err)
			}
			if tc.wantCap > 0 && cap(buf) != tc.wantCap {
				t.Errorf("buffer of %d bytes, want %d", cap(buf), tc.wantCap)
			}
			if cap(buf) > max(minBodyBuffer, 2*tc.size) {
				t.Errorf("buffer of %d bytes for %d: more than twice", cap(buf), tc.size)
			}
			if want := bodyCharge(tc.size, cap(buf)); b.InUse() != want {
				t.Errorf("charged %d, want %d", b.InUse(), want)
			}
			putBuffer(buf)
		})
	}
}

// trickle reads body chunk bytes at a time and, as net/http's body of a
// request with a Content-Length does, says EOF with the last bytes.
type trickle struct {
	body  []byte
	chunk int
}

func (r *trickle) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), r.chunk)], r.body)
	r.body = r.body[n:]
	if len(r.body) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// A request that could not fit even with all the room younger ones hold
// takes none of it: it waits for the older ones, and the younger ones keep
// theirs.
func TestBudgetTakesBackOnlyWhatHelps(t *testing.T) {
	b := NewBudget(1000, time.Minute)
	ctx := t.Context()
	computing := b.claim(nil)
	if err := computing.grow(ctx, 700, true); err != nil {
		t.Fatal(err)
	}
	c := b.claim(nil)
	var interrupted atomic.Int32
	younger := b.claim(func() { interrupted.Add(1) })
	if err := younger.grow(ctx, 100, false); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.grow(context.Background(), 500, false) }()
	waitUntil(t, "waiting", func() bool { return b.waiting() == 1 })
	if younger.isWounded() || interrupted.Load() != 0 {
		t.Fatal("the younger request was refused for nothing: 500 does not fit in 1000 - 700")
	}
	computing.release()
	if err := <-done; err != nil {
		t.Fatalf("grow after the older one is done: %v", err)
	}
	if younger.isWounded() {
		t.Error("the younger request was refused: 100 + 500 fit")
	}
}

// What one {} decodes into, per type of the request, against valueCost:
// live after the decode, and allocated while it ran.
func TestDecodeCostPerValue(t *testing.T) {
	const n = 20000
	items := "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]"
	var jobs strings.Builder
	for i := range n {
		fmt.Fprintf(&jobs, `,"%d":{}`, i)
	}
	bodies := map[string]string{
		"volumeClaimTemplates": `{"children":{"StatefulSet.apps/v1":{"a":{"spec":{"volumeClaimTemplates":` + items + `}}}}}`,
		"containers":           `{"children":{"Deployment.apps/v1":{"a":{"spec":{"template":{"spec":{"containers":` + items + `}}}}}}}`,
		"Jobs":                 `{"children":{"Job.batch/v1":{` + jobs.String()[1:] + `}}}`,
		"conditions":           `{"parent":{"status":{"conditions":` + items + `}}}`,
	}
	for name, body := range bodies {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var req wire.SyncRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		allocated := (after.TotalAlloc - before.TotalAlloc) / n
		runtime.GC()
		runtime.ReadMemStats(&after)
		live := (after.HeapAlloc - before.HeapAlloc) / n
		runtime.KeepAlive(&req)
		if got := jsonValues([]byte(body)); got < n {
			t.Errorf("%s: %d values counted, want %d at least", name, got, n)
		}
		if live > valueCost {
			t.Errorf("%s: %d bytes live per {}, over valueCost (%d)", name, live, valueCost)
		}
		t.Logf("%s: per {} %d bytes live, %d allocated", name, live, allocated)
	}
}

func TestJSONValues(t *testing.T) {
	tests := map[string]int64{
		`{}`:                              1,
		`{"a":[1,{"b":"{[\"]}"}],"c":[]}`: 4,
		`"\\"`:                            0,
		`{"s":"x\\\"{"}`:                  1,
		`["unterminated`:                  1,
	}
	for body, want := range tests {
		if got := jsonValues([]byte(body)); got != want {
			t.Errorf("%s: %d, want %d", body, got, want)
		}
	}
}
