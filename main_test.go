package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a log destination the server writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServe runs serve with args until the test ends, and returns the
// address it listens on.
func startServe(t *testing.T, log *slog.Logger, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, args, log, func(a net.Addr) { addrc <- a }) }()
	select {
	case a := <-addrc:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return a.String()
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
		return ""
	}
}

// SIGTERM lets a sync that is in flight finish: the real binary gets half
// a request body, then SIGTERM, then the rest, and still answers it before
// it exits 0.
func TestSIGTERMFinishesInFlightSync(t *testing.T) {
	body, err := os.ReadFile("hook/testdata/metacontroller/sync-v1-observed-children.json")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "monocle-hook")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--listen=127.0.0.1:0", "--shutdown-timeout=10s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	logs := bufio.NewScanner(stderr)
	var addr string
	for addr == "" && logs.Scan() {
		var line struct{ Msg, Address string }
		if json.Unmarshal(logs.Bytes(), &line) == nil && line.Msg == "serving" {
			addr = line.Address
		}
	}
	if addr == "" {
		t.Fatal("the hook never logged its address")
	}
	go io.Copy(io.Discard, stderr)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	half := len(body) / 2
	if _, err := conn.Write(body[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request is in the handler now
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the server is draining
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("a new connection was accepted while draining")
	}
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Contains(answer, []byte(`"children"`)) {
		t.Fatalf("in-flight sync got %d %s", resp.StatusCode, answer)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the hook exited with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hook did not exit after its last sync")
	}
}

// The render subcommand reads each example file and prints its children as
// YAML documents. That they are exactly /sync's answer is
// hook.TestRenderIsSync's to show.
func TestRenderExamples(t *testing.T) {
	files, _ := filepath.Glob("examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var out bytes.Buffer
			if err := render([]string{"-f", f}, nil, &out); err != nil {
				t.Fatal(err)
			}
			for _, kind := range []string{"Secret", "ConfigMap", "Service", "Deployment"} {
				if !strings.Contains(out.String(), "\nkind: "+kind+"\n") {
					t.Errorf("no %s in:\n%s", kind, out.String())
				}
			}
		})
	}
}

func TestRenderRejectsABadSpec(t *testing.T) {
	bad := "apiVersion: monocle.monocle.change-metrics.io/v1alpha1\nkind: Monocle\nmetadata: {name: m}\nspec: {storageSize: lots}\n"
	err := render([]string{"-f", "-"}, strings.NewReader(bad), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "spec.storageSize") {
		t.Fatalf("err = %v", err)
	}
}

// Neither the log nor /metrics carries a secret: not the values of the
// Secrets a real sync request holds, nor a token sent in a body the hook
// cannot decode.
func TestServeLogsAndMetricsHoldNoSecret(t *testing.T) {
	fixture, err := os.ReadFile("hook/testdata/metacontroller/sync-v1-observed-children.json")
	if err != nil {
		t.Fatal(err)
	}
	// The Secret monocle-sample-api's values, as sent (base64) and decoded;
	// the decoded API key is also in the Secret's last-applied annotation.
	secrets := []string{
		"Z2hwX2V4YW1wbGVfYWRtaW5fdG9rZW4=", "ghp_example_admin_token",
		"Y2FwdHVyZWQtZml4dHVyZS1rZXktMDAwMDAw", "captured-fixture-key-000000",
	}
	for _, s := range []string{secrets[0], secrets[2], secrets[3]} {
		if !bytes.Contains(fixture, []byte(s)) {
			t.Fatalf("the fixture no longer holds %s", s)
		}
	}
	const token = "ghp_T0KEN0123456789sentInABadBody"

	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base := "http://" + startServe(t, log, "--listen=127.0.0.1:0")
	post := func(path, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(answer)
	}

	code, answer := post("/sync", string(fixture))
	if code != 200 || !strings.Contains(answer, secrets[0]) {
		// The admin's GITHUB_TOKEN is kept: it went through the process.
		t.Fatalf("sync answered %d without the admin's key: %.300s", code, answer)
	}
	if !strings.Contains(logs.String(), `"msg":"sync"`) {
		t.Fatalf("the sync was not logged:\n%s", logs.String())
	}

	for _, c := range []struct{ name, path, body string }{
		{name: "syntax error at the token", path: "/sync", body: `{"parent": ` + token + `}`},
		{name: "body cut after the token", path: "/sync", body: `{"parent": {"metadata": {"name": "` + token},
		{name: "token as Secret data", path: "/sync", body: `{"children": {"Secret.v1": {"x": {"data": {"GITHUB_TOKEN": "` + token + `"}}}}}`},
		{name: "token as a Secret key", path: "/sync", body: `{"children": {"Secret.v1": {"x": {"data": {"` + token + `": 1}}}}}`},
		{name: "token in stringData", path: "/sync", body: `{"children": {"Secret.v1": {"x": {"stringData": {"` + token + `": ["` + token + `"]}}}}}`},
		{name: "token as a quantity", path: "/sync", body: `{"related": {"PersistentVolumeClaim.v1": {"x": {"status": {"capacity": {"storage": "` + token + `"}}}}}}`},
		{name: "token after the object", path: "/sync", body: `{"parent": null} ` + token},
		{name: "customize: syntax error at the token", path: "/customize", body: `{"parent": ` + token + `}`},
		// time.Parse's error, which metav1.Time returns, quotes the value.
		{name: "token as a timestamp", path: "/sync", body: `{"parent": {"metadata": {"name": "m", "creationTimestamp": "` + token + `"}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(logs.String())
			code, answer := post(c.path, c.body)
			if code != http.StatusBadRequest {
				t.Errorf("answered %d %s, want 400", code, answer)
			}
			logged := logs.String()[before:]
			if !strings.Contains(logged, `"reason":"malformed"`) {
				t.Errorf("no malformed request logged:\n%s", logged)
			}
			if strings.Contains(logged, token) || strings.Contains(answer, token) {
				t.Errorf("the token is in the log or the answer:\nlog: %s\nanswer: %s", logged, answer)
			}
		})
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(metrics, []byte(`monocle_hook_sync_errors_total{reason="malformed"}`)) {
		t.Fatalf("unexpected /metrics:\n%s", metrics)
	}
	for _, s := range append(secrets, token) {
		if bytes.Contains(metrics, []byte(s)) {
			t.Errorf("/metrics holds %s", s)
		}
	}
	all := logs.String()
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("the log holds %s:\n%s", s, all)
		}
	}
}
