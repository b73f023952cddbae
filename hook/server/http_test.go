package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

func newTestServer(t *testing.T, logs io.Writer) *httptest.Server {
	t.Helper()
	s := New(testEnv(), slog.New(slog.NewJSONHandler(logs, nil)), prometheus.NewRegistry(), Options{})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHTTPBadInput(t *testing.T) {
	srv := newTestServer(t, io.Discard)
	tests := map[string]struct {
		method, body string
		code         int
		message      string
	}{
		"malformed JSON":          {"POST", `{"parent":`, 400, "not a sync request"},
		"not an object":           {"POST", `[1,2]`, 400, "not a sync request"},
		"no parent":               {"POST", `{"children":{}}`, 400, "no parent"},
		"parent of wrong kind":    {"POST", `{"parent":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}}`, 400, `the parent is a "Pod" of "v1", not a Monocle of monocle.monocle.change-metrics.io/v1alpha1`},
		"children of wrong shape": {"POST", `{"parent":{"kind":"Monocle","metadata":{"name":"x"}},"children":{"Secret.v1":5}}`, 400, "not a sync request"},
		"over the size limit":     {"POST", `{"parent":"` + strings.Repeat("x", wire.MaxBodyBytes) + `"}`, 413, "over"},
		"wrong method":            {"GET", ``, 405, "not allowed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+"/sync", strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			msg := strings.TrimSuffix(string(b), "\n")
			if resp.StatusCode != tc.code || !strings.Contains(msg, tc.message) || strings.Contains(msg, "\n") {
				t.Errorf("got %d %q, want %d with one line containing %q", resp.StatusCode, msg, tc.code, tc.message)
			}
		})
	}
}

// POSTing the recorded request answers the children and keeps the Secret's
// keys as observed; the log line has the parent and no secret value.
func TestHTTPSyncFixture(t *testing.T) {
	logs := &lockedBuffer{}
	srv := newTestServer(t, logs)
	code, body := post(t, srv.URL+"/sync", readFixture(t, "sync-v1-observed-children"))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if body != string(syncJSON(t, fixture(t, "sync-v1-observed-children"))) {
		t.Error("/sync answered other bytes than Sync")
	}
	data := child(t, body, "Secret", "monocle-sample-api")["data"].(map[string]any)
	if data["GITHUB_TOKEN"] != base64.StdEncoding.EncodeToString([]byte("ghp_example_admin_token")) || data["CRAWLERS_API_KEY"] == nil {
		t.Errorf("Secret data %v", data)
	}
	// The line is written once the answer is sent.
	waitUntil(t, "the sync logged", func() bool { return strings.Contains(logs.String(), `"msg":"sync"`) })
	for _, want := range []string{`"namespace":"default"`, `"name":"monocle-sample"`, `"generation":1`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %s lacks %s", logs.String(), want)
		}
	}
	for _, secret := range []string{"ghp_example_admin_token", "captured-fixture-key-000000", "Z2hwX2V4YW1wbGVfYWRtaW5fdG9rZW4"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds a secret value %q", secret)
		}
	}
	code, metrics := get(t, srv.URL+"/metrics")
	if code != 200 {
		t.Fatal(code)
	}
	for _, want := range []string{
		`monocle_hook_sync_requests_total{handler="sync",result="ok"} 1`,
		`monocle_hook_sync_requests_total{handler="customize",result="ok"} 0`,
		`monocle_hook_sync_duration_seconds_count{handler="sync"} 1`,
		`monocle_hook_desired_children_total{kind="Deployment"} 2`,
		`monocle_hook_sync_errors_total{handler="sync",reason="malformed"} 0`,
		`monocle_hook_memory_budget_bytes 3.7748736e+07`,
		`monocle_hook_memory_budget_in_use_bytes 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, secret := range []string{"ghp_example_admin_token", "captured-fixture-key"} {
		if strings.Contains(metrics, secret) {
			t.Errorf("/metrics holds a secret value")
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHealthAndDrain(t *testing.T) {
	s := New(testEnv(), slog.New(slog.NewJSONHandler(io.Discard, nil)), prometheus.NewRegistry(), Options{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		if code, _ := get(t, srv.URL+path); code != 200 {
			t.Errorf("%s: %d", path, code)
		}
	}
	s.Drain()
	if code, _ := get(t, srv.URL+"/readyz"); code != 503 {
		t.Errorf("/readyz while draining: %d", code)
	}
	if code, _ := get(t, srv.URL+"/healthz"); code != 200 {
		t.Errorf("/healthz while draining: %d", code)
	}
}

func TestPanicIsA500AndCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := New(hook.Env{Now: nil, Rand: nil}, slog.New(slog.NewJSONHandler(io.Discard, nil)), reg, Options{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	// A nil clock panics inside Sync: the server must answer, not crash.
	code, _ := post(t, srv.URL+"/sync", readFixture(t, "sync-v1-all-ready-job-complete"))
	if code != 500 {
		t.Fatalf("status %d, want 500", code)
	}
	_, metrics := get(t, srv.URL+"/metrics")
	if !strings.Contains(metrics, `monocle_hook_sync_errors_total{handler="sync",reason="panic"} 1`) ||
		!strings.Contains(metrics, `monocle_hook_sync_requests_total{handler="sync",result="error"} 1`) {
		t.Error("the panic is not counted")
	}
}

// Every recorded request is answered 200 by its handler, the parent check
// included.
func TestHTTPRecordedRequests(t *testing.T) {
	srv := newTestServer(t, io.Discard)
	for _, name := range append(fixtureNames(t), "customize-v1") {
		t.Run(name, func(t *testing.T) {
			path := "/sync"
			if strings.HasPrefix(name, "customize") {
				path = "/customize"
			}
			if code, body := post(t, srv.URL+path, readFixture(t, name)); code != 200 {
				t.Errorf("%s answered %d: %.300s", path, code, body)
			}
		})
	}
}

// The parent must be a Monocle of the CRD's group and version, on both
// hooks; else a one-line 400 that says what it is.
func TestHTTPParentIsAMonocle(t *testing.T) {
	srv := newTestServer(t, io.Discard)
	tests := map[string]struct {
		apiVersion, kind any
		message          string
	}{
		"another group":    {"monocle.example.com/v1alpha1", "Monocle", `the parent is a "Monocle" of "monocle.example.com/v1alpha1", not a Monocle of monocle.monocle.change-metrics.io/v1alpha1`},
		"another version":  {"monocle.monocle.change-metrics.io/v1", "Monocle", `of "monocle.monocle.change-metrics.io/v1", not`},
		"another kind":     {"monocle.monocle.change-metrics.io/v1alpha1", "Pod", `the parent is a "Pod" of`},
		"no apiVersion":    {nil, "Monocle", `of "", not a Monocle`},
		"no kind":          {"monocle.monocle.change-metrics.io/v1alpha1", nil, `the parent is a "" of`},
		"a long, odd kind": {"v1", strings.Repeat("K\n", 300), `the parent is a "` + strings.Repeat(`K\n`, 32) + `"... of "v1"`},
	}
	for name, tc := range tests {
		for _, hook := range []struct{ path, fixture string }{{"/sync", "sync-v1-observed-children"}, {"/customize", "customize-v1"}} {
			t.Run(name+" "+hook.path, func(t *testing.T) {
				var req map[string]any
				if err := json.Unmarshal(readFixture(t, hook.fixture), &req); err != nil {
					t.Fatal(err)
				}
				parent := req["parent"].(map[string]any)
				parent["apiVersion"], parent["kind"] = tc.apiVersion, tc.kind
				body, _ := json.Marshal(req)
				code, answer := post(t, srv.URL+hook.path, body)
				msg := strings.TrimSuffix(answer, "\n")
				if code != 400 || !strings.Contains(msg, tc.message) || strings.Contains(msg, "\n") || len(msg) > 300 {
					t.Errorf("answered %d %q, want 400 with one line containing %q", code, msg, tc.message)
				}
			})
		}
	}
}

// /customize is counted, timed and logged as customize, never as sync.
func TestHTTPPerHandlerMetricsAndLogs(t *testing.T) {
	logs := &lockedBuffer{}
	s := New(testEnv(), slog.New(slog.NewJSONHandler(logs, nil)), prometheus.NewRegistry(), Options{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	if code, body := post(t, srv.URL+"/customize", readFixture(t, "customize-v1")); code != 200 {
		t.Fatalf("customize: %d %s", code, body)
	}
	if code, _ := post(t, srv.URL+"/customize", []byte(`{"parent":`)); code != 400 {
		t.Fatalf("malformed customize: %d", code)
	}
	if code, _ := post(t, srv.URL+"/sync", readFixture(t, "sync-v1-new-parent")); code != 200 {
		t.Fatalf("sync: %d", code)
	}
	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{
		`monocle_hook_sync_requests_total{handler="customize",result="ok"} 1`,
		`monocle_hook_sync_requests_total{handler="customize",result="error"} 1`,
		`monocle_hook_sync_requests_total{handler="sync",result="ok"} 1`,
		`monocle_hook_sync_requests_total{handler="sync",result="error"} 0`,
		`monocle_hook_sync_errors_total{handler="customize",reason="malformed"} 1`,
		`monocle_hook_sync_errors_total{handler="sync",reason="malformed"} 0`,
		`monocle_hook_sync_duration_seconds_count{handler="customize"} 2`,
		`monocle_hook_sync_duration_seconds_count{handler="sync"} 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"customize failed","handler":"customize"`) || strings.Contains(logs.String(), "sync failed") {
		t.Errorf("the customize failure is not logged as such:\n%s", logs.String())
	}
}
