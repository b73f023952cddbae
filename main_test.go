package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SIGTERM (here: the context) lets a sync that is in flight finish: the
// client sends half its body, the server starts draining, the client sends
// the rest and still gets its answer.
func TestShutdownFinishesInFlightSync(t *testing.T) {
	body, err := os.ReadFile("hook/testdata/metacontroller/sync-v1-observed-children.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"--listen=127.0.0.1:0", "--shutdown-timeout=10s"},
			slog.New(slog.NewTextHandler(io.Discard, nil)), func(a net.Addr) { addrc <- a })
	}()
	addr := (<-addrc).String()

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
	cancel()
	time.Sleep(200 * time.Millisecond) // the server is draining
	select {
	case err := <-done:
		t.Fatalf("server stopped with a sync in flight: %v", err)
	default:
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
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server did not stop after its last sync")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("still listening after shutdown")
	}
}

// render prints, for every example, the children /sync answers for it as a
// new parent.
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
