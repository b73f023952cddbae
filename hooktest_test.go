package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/server"
)

// `monocle-hook test`, the helm test's command, against the hook's own
// handler (plain and TLS, after a busy answer) and against hooks that answer
// wrong: each wrong answer fails it, saying why.
func TestHookTest(t *testing.T) {
	real := server.New(hook.Env{Now: time.Now, Rand: rand.Reader, Image: hookImage()},
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry(), server.Options{}).Handler()
	// The real hook's answer to the recorded request, edited.
	rec := httptest.NewRecorder()
	real.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(recordedSync)))
	if rec.Code != http.StatusOK {
		t.Fatalf("the hook answered %d: %s", rec.Code, rec.Body)
	}
	answer := rec.Body.Bytes()
	edited := func(edit func(resp map[string]any)) http.HandlerFunc {
		var resp map[string]any
		if err := json.Unmarshal(answer, &resp); err != nil {
			t.Fatal(err)
		}
		edit(resp)
		b, _ := json.Marshal(resp)
		return func(w http.ResponseWriter, r *http.Request) { w.Write(b) }
	}
	children := func(resp map[string]any) []any { return resp["children"].([]any) }

	busy := atomic.Int32{}
	tests := map[string]struct {
		handler http.Handler
		tls     bool
		says    string // "" passes
	}{
		"the hook":        {handler: real},
		"the hook, https": {handler: real, tls: true},
		"busy, then the hook": {handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if busy.Add(1) == 1 {
				http.Error(w, "draining", http.StatusServiceUnavailable)
				return
			}
			real.ServeHTTP(w, r)
		})},
		"a 500": {handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "outside_monocle", http.StatusInternalServerError)
		}), says: "500 Internal Server Error"},
		"not JSON": {handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") }),
			says: "not a sync response"},
		"a child left out": {handler: edited(func(resp map[string]any) {
			kept := children(resp)[:0]
			for _, c := range children(resp) {
				if c.(map[string]any)["kind"] != "StatefulSet" {
					kept = append(kept, c)
				}
			}
			resp["children"] = kept
		}), says: "leaves out 1 of the 7 observed children, which Metacontroller would delete: StatefulSet monocle-sample-elastic"},
		"a child elsewhere": {handler: edited(func(resp map[string]any) {
			children(resp)[0].(map[string]any)["metadata"].(map[string]any)["namespace"] = "kube-system"
		}), says: `in namespace "kube-system", outside the Monocle's (default)`},
		"no status": {handler: edited(func(resp map[string]any) { delete(resp, "status") }), says: "no status"},
		"spec held": {handler: edited(func(resp map[string]any) {
			for _, c := range resp["status"].(map[string]any)["conditions"].([]any) {
				if c := c.(map[string]any); c["type"] == "SpecApplied" {
					c["status"], c["reason"] = "False", "InvalidSpec"
				}
			}
		}), says: "SpecApplied=False (InvalidSpec)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(tc.handler)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			args := []string{"--timeout", "10s"}
			if tc.tls {
				srv.StartTLS()
				ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
				args = append(args, "--ca-bundle", string(ca))
			} else {
				srv.Start()
			}
			defer srv.Close()
			var stdout, stderr bytes.Buffer
			err := testHook(context.Background(), append(args, "--url", srv.URL), &stdout, &stderr)
			if tc.says == "" {
				if err != nil {
					t.Fatalf("monocle-hook test: %v\n%s", err, stderr.String())
				}
				if want := "Monocle default/monocle-sample, 10 children (all 7 observed kept), Ready=False (ComponentsNotReady), SpecApplied=True (Applied)"; !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout %q, want it to say %q", stdout.String(), want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("monocle-hook test: %v; want an error saying %q", err, tc.says)
			}
		})
	}

	// An https hook whose certificate no CA given signed (the system's
	// roots do not hold httptest's), and a bundle that is not PEM.
	srv := httptest.NewUnstartedServer(real)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
	srv.StartTLS()
	defer srv.Close()
	err := testHook(context.Background(), []string{"--url", srv.URL, "--timeout", "5s"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("against a certificate no CA given signed: %v; want a certificate error", err)
	}
	err = testHook(context.Background(), []string{"--url", srv.URL, "--ca-bundle", "not PEM"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("with a bundle that is not PEM: %v; want it said", err)
	}
}
