package server

// The attacks at a small scale, against the real handler on a real
// socket: the budget refuses with 429 and Retry-After, nothing panics, the
// health endpoints and /metrics answer while the budget is full, and a
// normal sync is answered once the attack is over. tools/loadtest attack
// runs them at full scale against the built binary (BENCHMARKS.md).

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/testbodies"
)

// lockedBuffer is a log destination the server writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// budgetServer serves a Server with opts; configure, if not nil, sets the
// http.Server's timeouts before it starts.
func budgetServer(t *testing.T, opts Options, configure func(*http.Server)) (*Server, *httptest.Server, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	s := New(testEnv(), slog.New(slog.NewJSONHandler(logs, nil)), prometheus.NewRegistry(), opts)
	srv := httptest.NewUnstartedServer(s.Handler())
	if configure != nil {
		configure(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return s, srv, logs
}

// startRequest opens a connection and sends a POST's headers, announcing
// contentLength, and the first bytes of its body.
func startRequest(t *testing.T, srv *httptest.Server, path string, contentLength int, first []byte) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: hook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, contentLength)
	if _, err := conn.Write(first); err != nil {
		t.Fatal(err)
	}
	return conn
}

func readAnswer(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// checkServing asserts that the health endpoints and /metrics answer, and,
// with sync, that a normal sync does.
func checkServing(t *testing.T, srv *httptest.Server, sync bool) {
	t.Helper()
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/metrics"} {
		if code, _ := get(t, srv.URL+path); code != 200 {
			t.Errorf("%s answered %d", path, code)
		}
	}
	if sync {
		if code, body := post(t, srv.URL+"/sync", readFixture(t, "sync-v1-observed-children")); code != 200 {
			t.Errorf("a normal sync answered %d: %.200s", code, body)
		}
	}
}

// 16 requests that announce 4 MiB and send 10 bytes hold what arrived (in
// the smallest buffer), not what they announced; everything else is
// served meanwhile.
func TestAttackAnnouncedButNotSent(t *testing.T) {
	s, srv, _ := budgetServer(t, Options{}, nil)
	const conns = 16
	for range conns {
		startRequest(t, srv, "/sync", wire.MaxBodyBytes, []byte(`{"parent":`))
	}
	want := conns * bodyCharge(10, minBodyBuffer)
	waitUntil(t, "every request charged", func() bool { return s.budget.InUse() == want })
	checkServing(t, srv, true)
	// The sync's claim goes once its handler returns, just after its answer.
	waitUntil(t, "the slow requests alone charged", func() bool { return s.budget.InUse() == want })
	_, metrics := get(t, srv.URL+"/metrics")
	if !strings.Contains(metrics, fmt.Sprintf("monocle_hook_memory_budget_in_use_bytes %d\n", want)) {
		t.Errorf("/metrics does not show the %d bytes in use", want)
	}
}

// While an older slow request holds most of the budget, a normal sync
// waits, then is answered 429 with Retry-After; health and /metrics are
// answered meanwhile, and the sync is answered once the budget is free.
func TestAttackFullBudgetIs429(t *testing.T) {
	s, srv, logs := budgetServer(t, Options{MemoryBudget: 2 << 20, BudgetWait: 20 * time.Millisecond}, nil)
	holder := startRequest(t, srv, "/sync", 400_000, bytes.Repeat([]byte(" "), 300_000))
	waitUntil(t, "the budget held", func() bool { return s.budget.InUse() == bodyCharge(300_000, 400_000) })
	checkServing(t, srv, false)

	resp, err := http.Post(srv.URL+"/sync", "application/json", bytes.NewReader(readFixture(t, "sync-v1-observed-children")))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || bytes.Count(answer, []byte("\n")) != 1 {
		t.Errorf("answered %d, Retry-After %q: %q; want 429, 1, one line", resp.StatusCode, resp.Header.Get("Retry-After"), answer)
	}
	if !strings.Contains(logs.String(), `"msg":"sync refused: the memory budget is in use"`) {
		t.Errorf("the refusal is not logged:\n%s", logs.String())
	}
	if got := counterValue(t, s, "monocle_hook_sync_requests_total", handlerSync, resultOverBudget); got != 1 {
		t.Errorf("over_budget results: %v, want 1", got)
	}

	holder.Close()
	waitUntil(t, "the budget free", func() bool { return s.budget.InUse() == 0 })
	checkServing(t, srv, true)
}

// A request that would take more than the whole budget is refused at once
// with 413: waiting and retrying cannot help it.
func TestAttackBeyondTheBudgetIs413(t *testing.T) {
	s, srv, _ := budgetServer(t, Options{MemoryBudget: 3 << 20}, nil)
	body, err := testbodies.WithSpec(readFixture(t, "sync-v1-observed-children"), "config", testbodies.Config(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	code, answer := post(t, srv.URL+"/sync", body)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(answer, "more memory than the hook's whole budget") {
		t.Errorf("answered %d %q, want 413", code, answer)
	}
	if got := counterValue(t, s, "monocle_hook_sync_errors_total", handlerSync, "too_large"); got != 1 {
		t.Errorf("too_large: %v, want 1", got)
	}
	checkServing(t, srv, true)
}

// Bursts of large requests, more than the budget holds at once: each is
// answered 200 or 429 (with Retry-After), the oldest at least is answered
// 200, nothing panics, and the budget is free after.
func TestAttackBursts(t *testing.T) {
	fixture := readFixture(t, "sync-v1-observed-children")
	must := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := map[string]struct {
		body        []byte
		concurrency int
		budget      int64
	}{
		// Each costs about 3.6 MiB: 2.3 to parse its config, 1.3 for its
		// 650 JSON values.
		"64 KiB configs": {must(testbodies.WithSpec(fixture, "config", testbodies.Config(64<<10))), 8, 6 << 20},
		// Each costs about 3.6 MiB, most of it for its 1,500 JSON values.
		"100 KB requests": {must(testbodies.Grown(fixture, 100_000)), 16, 8 << 20},
		// The YAML parser's to refuse (its expanded size is bounded):
		// here it must only not take the hook down.
		"alias bombs": {must(testbodies.WithSpec(fixture, "config", testbodies.AliasBomb(1000, 100))), 4, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, srv, _ := budgetServer(t, Options{MemoryBudget: tc.budget}, nil)
			type result struct {
				code       int
				retryAfter string
				err        error
			}
			results := make(chan result, tc.concurrency)
			for range tc.concurrency {
				go func() {
					resp, err := http.Post(srv.URL+"/sync", "application/json", bytes.NewReader(tc.body))
					if err != nil {
						results <- result{err: err}
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					results <- result{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
				}()
			}
			codes := map[int]int{}
			for range tc.concurrency {
				r := <-results
				switch {
				case r.err != nil:
					t.Errorf("request failed: %v", r.err)
				case r.code == 429 && r.retryAfter == "":
					t.Error("a 429 without Retry-After")
				case r.code != 200 && r.code != 429:
					t.Errorf("answered %d", r.code)
				}
				codes[r.code]++
			}
			t.Logf("answers: %v", codes)
			if codes[200] == 0 {
				t.Error("no request was answered 200")
			}
			if got := counterValue(t, s, "monocle_hook_sync_errors_total", handlerSync, "panic"); got != 0 {
				t.Errorf("%v panics", got)
			}
			waitUntil(t, "the budget free", func() bool { return s.budget.InUse() == 0 })
			checkServing(t, srv, true)
		})
	}
}

// An older request that needs the room a younger, slow one holds takes it:
// the younger one's read is cut and it is answered 429; the older one is
// answered 200.
func TestAttackOlderRequestTakesRoomFromSlowerOne(t *testing.T) {
	// The older request alone fits (about 2.0 MiB, 1.3 of it for its 650
	// JSON values); with the younger one's 0.5 MiB, it does not.
	s, srv, _ := budgetServer(t, Options{MemoryBudget: 2304 << 10, BudgetWait: time.Minute}, nil)
	body := readFixture(t, "sync-v1-observed-children")
	body = append(body, bytes.Repeat([]byte(" "), 100_000-len(body))...)

	older := startRequest(t, srv, "/sync", len(body), body[:1])
	waitUntil(t, "the older request charged", func() bool { return s.budget.InUse() == bodyCharge(1, minBodyBuffer) })
	younger := startRequest(t, srv, "/sync", 200_000, bytes.Repeat([]byte(" "), 90_000))
	waitUntil(t, "the younger request charged", func() bool {
		return s.budget.InUse() == bodyCharge(1, minBodyBuffer)+bodyCharge(90_000, 128<<10)
	})
	if _, err := older.Write(body[1:]); err != nil {
		t.Fatal(err)
	}
	if resp, answer := readAnswer(t, older); resp.StatusCode != 200 {
		t.Errorf("the older request answered %d: %.200s", resp.StatusCode, answer)
	}
	if resp, answer := readAnswer(t, younger); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("the younger request answered %d %q (Retry-After %q), want 429", resp.StatusCode, answer, resp.Header.Get("Retry-After"))
	}
	waitUntil(t, "the budget free", func() bool { return s.budget.InUse() == 0 })
	checkServing(t, srv, true)
}

// A body that does not arrive within the server's read timeout is a 408,
// counted as a timeout.
func TestBodyReadTimeoutIs408(t *testing.T) {
	s, srv, _ := budgetServer(t, Options{}, func(h *http.Server) { h.ReadTimeout = 500 * time.Millisecond })
	conn := startRequest(t, srv, "/sync", 1000, []byte(`{"parent":`))
	resp, answer := readAnswer(t, conn)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("answered %d %q, want 408", resp.StatusCode, answer)
	}
	if got := counterValue(t, s, "monocle_hook_sync_errors_total", handlerSync, "timeout"); got != 1 {
		t.Errorf("timeouts: %v, want 1", got)
	}
}

// An answer whose write fails (here the write timeout has passed before
// the handler writes) is an error in the metrics and the log, not an ok.
func TestFailedWriteIsAnError(t *testing.T) {
	s, srv, logs := budgetServer(t, Options{}, func(h *http.Server) { h.WriteTimeout = time.Nanosecond })
	resp, err := http.Post(srv.URL+"/sync", "application/json", bytes.NewReader(readFixture(t, "sync-v1-observed-children")))
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	waitUntil(t, "the request counted", func() bool { return answered(t, s, handlerSync) == 1 })
	for _, c := range []struct {
		name, second string
		want         float64
	}{
		{"monocle_hook_sync_requests_total", resultOK, 0},
		{"monocle_hook_sync_requests_total", resultError, 1},
		{"monocle_hook_sync_errors_total", "write_failed", 1},
	} {
		if got := counterValue(t, s, c.name, handlerSync, c.second); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.second, got, c.want)
		}
	}
	if !strings.Contains(logs.String(), `"level":"ERROR","msg":"sync answer not delivered"`) {
		t.Errorf("the failed write is not logged as an error:\n%s", logs.String())
	}
}

// answered counts the requests of handler, whatever their result.
func answered(t *testing.T, s *Server, handler string) float64 {
	var n float64
	for _, result := range []string{resultOK, resultError, resultOverBudget} {
		n += counterValue(t, s, "monocle_hook_sync_requests_total", handler, result)
	}
	return n
}

// counterValue is the value of the counter name whose labels (handler and
// then result or reason) have these values, as /metrics would show it.
func counterValue(t *testing.T, s *Server, name string, labelValues ...string) float64 {
	t.Helper()
	families, err := s.gatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labelValues) {
				continue
			}
			// Labels come sorted by name: handler, then reason or result.
			for i, l := range m.GetLabel() {
				if l.GetValue() != labelValues[i] {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s%q", name, labelValues)
	return 0
}

// A client that sends most of a body and stalls is cut once the body
// falls behind the minimum rate (a 408), and what it held is free again:
// stalled bodies cannot keep the budget from the requests that need it.
func TestStalledBodyIsCut(t *testing.T) {
	s, srv, _ := budgetServer(t, Options{}, nil)
	conn := startRequest(t, srv, "/sync", 100_000, bytes.Repeat([]byte(" "), 90_000))
	waitUntil(t, "the body charged", func() bool { return s.budget.InUse() > 0 })
	if resp, answer := readAnswer(t, conn); resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("answered %d %q, want 408", resp.StatusCode, answer)
	}
	waitUntil(t, "the budget free", func() bool { return s.budget.InUse() == 0 })
	checkServing(t, srv, true)
}

// The minimum body rate ends with the body: a request that then waits for
// the budget longer than its body took is still answered.
func TestBodyRateEndsWithTheBody(t *testing.T) {
	s, srv, _ := budgetServer(t, Options{MemoryBudget: 2 << 20, BudgetWait: 5 * time.Second}, nil)
	holder := startRequest(t, srv, "/sync", 400_000, bytes.Repeat([]byte(" "), 300_000))
	waitUntil(t, "the budget held", func() bool { return s.budget.InUse() == bodyCharge(300_000, 400_000) })
	go func() {
		time.Sleep(2500 * time.Millisecond) // past the body's paced deadline
		holder.Close()
	}()
	if code, answer := post(t, srv.URL+"/sync", readFixture(t, "sync-v1-observed-children")); code != 200 {
		t.Errorf("answered %d %.200s, want 200 once the budget is free", code, answer)
	}
}
