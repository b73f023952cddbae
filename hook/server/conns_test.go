package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The two loopback addresses of these tests: the hook listens on the
// first, the one other client sends from the second.
const (
	ordinaryAddress = "127.0.0.1"
	attackerAddress = "127.0.0.2"
)

// limitedServer serves a Server on 127.0.0.1 through a ConnLimit of max
// connections, perAddress of them from one address, as main does.
func limitedServer(t *testing.T, max, perAddress int) (*ConnLimit, string) {
	t.Helper()
	tcp, err := net.Listen("tcp", ordinaryAddress+":0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewConnLimit(tcp, max, perAddress)
	s := New(testEnv(), slog.New(slog.NewJSONHandler(io.Discard, nil)), prometheus.NewRegistry(), Options{})
	srv := &http.Server{Handler: s.Handler(), ConnState: l.ConnState, ConnContext: l.ConnContext}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, tcp.Addr().String()
}

// dialFrom opens a connection to addr from the loopback address from and
// sends raw, an HTTP request or part of one.
func dialFrom(t *testing.T, from, addr, raw string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	return c
}

// statusOf reads the answer's status on c; 0 if c is closed without one.
func statusOf(c net.Conn) int {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// held counts the connections of address in the pool (reserve false) or
// on the reserve.
func (l *ConnLimit) held(reserve bool, address string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &l.pool
	if reserve {
		p = &l.reserve
	}
	n := 0
	for c := range p.conns {
		if c.address == address {
			n++
		}
	}
	return n
}

// One client that holds every connection it opens, stalled in its
// headers (as a body stalled one byte short, but for as long as the test
// needs), takes at most its share of the places: ordinary syncs from
// another address are answered 200 meanwhile, the stalling address's own
// probes are answered on the reserve and its syncs there 503, and nothing
// of an address stays once its connections are gone.
func TestConnectionsSharedPerAddress(t *testing.T) {
	const max, perAddress, attackers = 8, 4, 12
	l, addr := limitedServer(t, max, perAddress)
	body := readFixture(t, "sync-v1-observed-children")
	syncRequest := fmt.Sprintf("POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Length: %d\r\n\r\n%s", len(body), body)

	var conns []net.Conn // every connection the test keeps open
	for range attackers {
		conns = append(conns, dialFrom(t, attackerAddress, addr, fmt.Sprintf("POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Length: %d\r\n", len(body))))
	}
	waitUntil(t, "every attacker's connection accepted", func() bool {
		return l.held(false, attackerAddress)+l.held(true, attackerAddress) == attackers
	})

	// The rest of the places: syncs from another address, all at once.
	var wg sync.WaitGroup
	codes := make([]int, max-perAddress)
	for i := range codes {
		c := dialFrom(t, ordinaryAddress, addr, syncRequest)
		conns = append(conns, c) // kept alive: closed with them below
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = statusOf(c) }()
	}
	wg.Wait()
	for i, code := range codes {
		if code != 200 {
			t.Errorf("ordinary sync %d from %s, beside %d stalled connections from %s: %d, want 200", i, ordinaryAddress, attackers, attackerAddress, code)
		}
	}
	if n := l.held(false, attackerAddress); n != perAddress {
		t.Fatalf("%s holds %d places after the syncs, want %d (its share)", attackerAddress, n, perAddress)
	}

	// The stalling address, at its share with nothing idle: its probes
	// are answered on the reserve, and a sync there is a 503.
	if code := statusOf(dialFrom(t, attackerAddress, addr, "GET /healthz HTTP/1.1\r\nHost: hook\r\nConnection: close\r\n\r\n")); code != 200 {
		t.Errorf("/healthz from %s at its share: %d, want 200 (on the reserve)", attackerAddress, code)
	}
	if code := statusOf(dialFrom(t, attackerAddress, addr, syncRequest)); code != http.StatusServiceUnavailable {
		t.Errorf("a sync from %s at its share: %d, want 503 (on the reserve)", attackerAddress, code)
	}

	for _, c := range conns {
		c.Close()
	}
	waitUntil(t, "no count left of an address without connections", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.pool.addresses) == 0 && len(l.pool.conns) == 0
	})
}

// An address at its share with an idle connection makes room among its
// own: its longest idle one is closed, and its new sync answered.
func TestConnectionsPerAddressIdleMakesRoom(t *testing.T) {
	const max, perAddress = 8, 2
	l, addr := limitedServer(t, max, perAddress)
	body := readFixture(t, "sync-v1-observed-children")
	var idle []net.Conn
	for range perAddress {
		c := dialFrom(t, attackerAddress, addr, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n")
		if code := statusOf(c); code != 200 {
			t.Fatalf("healthz: %d", code)
		}
		idle = append(idle, c)
	}
	waitUntil(t, "the keep-alive connections idle", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		n := 0
		for _, m := range l.pool.conns {
			if m.idle {
				n++
			}
		}
		return n == perAddress
	})
	c := dialFrom(t, attackerAddress, addr, fmt.Sprintf("POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	if code := statusOf(c); code != 200 {
		t.Errorf("a sync from an address at its share, beside its idle connections: %d, want 200", code)
	}
	// The one closed answers no more; the other answers again.
	closed := 0
	for _, c := range idle {
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n")
		if statusOf(c) == 0 {
			closed++
		}
	}
	if closed != 1 {
		t.Errorf("%d of the address's idle connections closed, want 1 (the longest idle)", closed)
	}
	if n := l.held(false, attackerAddress); n > perAddress {
		t.Errorf("%s holds %d places, more than its share %d", attackerAddress, n, perAddress)
	}
}
