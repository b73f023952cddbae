package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/hook/server"
)

// dialRequest opens a connection and sends raw, an HTTP request or part of
// one.
func dialRequest(t *testing.T, addr, raw string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	return c
}

func readStatus(t *testing.T, c net.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0 // closed
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// The hook holds at most --max-connections: idle ones make room for new
// ones, the health endpoints and /metrics answer on a reserve when every
// held connection is busy (a reserve connection held past server.ReserveHold
// makes room too), and a sync asked on the reserve is a 503.
func TestConnectionLimit(t *testing.T) {
	addr := startServe(t, io.Discard, "--listen", "127.0.0.1:0", "--max-connections", "4")
	sync, err := os.ReadFile("hook/testdata/metacontroller/sync-v1-observed-children.json")
	if err != nil {
		t.Fatal(err)
	}
	syncRequest := fmt.Sprintf("POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Length: %d\r\n\r\n%s", len(sync), sync)
	// Four idle keep-alive connections: a sync still gets one, made room for.
	for range 4 {
		c := dialRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n")
		if code := readStatus(t, c); code != 200 {
			t.Fatalf("healthz: %d", code)
		}
	}
	time.Sleep(50 * time.Millisecond) // the server marks them idle
	c := dialRequest(t, addr, syncRequest)
	if code := readStatus(t, c); code != 200 {
		t.Fatalf("a sync beside 4 idle connections: %d", code)
	}
	c.Close()
	time.Sleep(100 * time.Millisecond) // the server sees it closed

	// Four connections busy sending a body: the limit is reached.
	for range 4 {
		dialRequest(t, addr, fmt.Sprintf("POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Length: %d\r\n\r\n{", len(sync)))
	}
	time.Sleep(50 * time.Millisecond)
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		c := dialRequest(t, addr, "GET "+path+" HTTP/1.1\r\nHost: hook\r\nConnection: close\r\n\r\n")
		if code := readStatus(t, c); code != 200 {
			t.Errorf("%s at the limit: %d, want 200 (the reserve)", path, code)
		}
	}
	if code := readStatus(t, dialRequest(t, addr, syncRequest)); code != http.StatusServiceUnavailable {
		t.Errorf("a sync at the limit: %d, want 503", code)
	}
	// Idle on the reserve: room is made there too.
	for range 16 {
		readStatus(t, dialRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n"))
	}
	time.Sleep(50 * time.Millisecond)
	if code := readStatus(t, dialRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n")); code != 200 {
		t.Errorf("beside 16 idle reserve connections: %d, want 200", code)
	}
	// Every connection busy, the reserve's too (headers half sent, as a
	// client that stalls): past server.ReserveHold, the reserve's oldest makes
	// room, so the probes still answer.
	for range 16 {
		dialRequest(t, addr, "GET /healthz HTTP/1.1\r\n")
	}
	time.Sleep(2 * server.ReserveHold)
	if code := readStatus(t, dialRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n")); code != 200 {
		t.Errorf("beside 16 stalled reserve connections: %d, want 200", code)
	}
}
