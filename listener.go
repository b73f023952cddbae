package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/change-metrics/monocle-hook/hook/server"
)

// reservedConnections are accepted beyond --max-connections for the
// kubelet's probes and Prometheus: on them the hook answers only its
// health endpoints and /metrics (server.OnReserve).
const reservedConnections = 16

// connLimit bounds the connections the hook holds: each costs memory, and
// one hook serves every Monocle. At the limit, the connection idle the
// longest is closed to make room (a client reopens one at no cost;
// Metacontroller keeps at most 2 idle, Go's default), else the new one is
// taken on the reserve (the same way), else closed at once.
type connLimit struct {
	net.Listener
	mu            sync.Mutex
	pool, reserve connPool
}

// connPool is a number of connections, each with since when it is idle or
// busy. A busy one is closed to make room only on the reserve, once held
// past reserveHold: a health request or a scrape is over in milliseconds,
// so one held longer is a sync's 503 lingering or a client that stalls.
type connPool struct {
	max   int
	hold  time.Duration // 0: a busy connection keeps its place
	conns map[*limitedConn]connMark
}

type connMark struct {
	since time.Time
	idle  bool
}

// reserveHold is how long a reserve connection keeps its place against a
// new one.
const reserveHold = 100 * time.Millisecond

func newConnLimit(l net.Listener, max int) *connLimit {
	return &connLimit{Listener: l,
		pool:    connPool{max: max, conns: map[*limitedConn]connMark{}},
		reserve: connPool{max: reservedConnections, hold: reserveHold, conns: map[*limitedConn]connMark{}}}
}

type limitedConn struct {
	net.Conn
	l    *connLimit
	pool *connPool
}

// Close gives the connection's place back; once given, a second Close
// deletes nothing.
func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	delete(c.pool.conns, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		for _, p := range []*connPool{&l.pool, &l.reserve} {
			if lc := l.take(p, c); lc != nil {
				return lc, nil
			}
		}
		c.Close() // every held connection is busy: hold this one no time
	}
}

// take holds c in p if p has room, or once the connection idle the
// longest, or busy past p.hold, is closed.
func (l *connLimit) take(p *connPool, c net.Conn) *limitedConn {
	l.mu.Lock()
	now := time.Now()
	var oldest *limitedConn
	if len(p.conns) >= p.max {
		for o, m := range p.conns {
			if (m.idle || p.hold > 0 && now.Sub(m.since) > p.hold) && (oldest == nil || m.since.Before(p.conns[oldest].since)) {
				oldest = o
			}
		}
		if oldest == nil {
			l.mu.Unlock()
			return nil
		}
		delete(p.conns, oldest) // its place is the new one's
	}
	lc := &limitedConn{Conn: c, l: l, pool: p}
	p.conns[lc] = connMark{since: now}
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
	return lc
}

// connState tracks which connections are idle, for Accept to close.
func (l *connLimit) connState(c net.Conn, state http.ConnState) {
	lc := limited(c)
	if lc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if m, held := lc.pool.conns[lc]; held && (state == http.StateIdle) != m.idle {
		lc.pool.conns[lc] = connMark{since: time.Now(), idle: state == http.StateIdle}
	}
}

// connContext marks the requests of a reserve connection.
func (l *connLimit) connContext(ctx context.Context, c net.Conn) context.Context {
	if lc := limited(c); lc != nil && lc.pool == &l.reserve {
		return server.OnReserve(ctx)
	}
	return ctx
}

func limited(c net.Conn) *limitedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, _ := c.(*limitedConn)
	return lc
}
