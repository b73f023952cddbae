package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/change-metrics/monocle-hook/hook"
)

// reservedConnections are accepted beyond --max-connections for the
// kubelet's probes and Prometheus: on them the hook answers only its
// health endpoints and /metrics (hook.OnReserve).
const reservedConnections = 16

// connLimit bounds the connections the hook holds: each costs memory
// (about 19 KB idle), and one hook serves every Monocle. At the limit, the
// connection idle the longest is closed to make room (a client reopens one
// at no cost; Metacontroller keeps at most 2 idle, Go's default), else the
// new one is taken on the reserve (the same way), else closed at once.
type connLimit struct {
	net.Listener
	mu            sync.Mutex
	pool, reserve connPool
}

// connPool is a number of connections, and since when each idle one is.
// On the reserve every connection is listed: a health request or a scrape
// is over in milliseconds, so one held longer (a sync's 503 lingering, a
// client that stalls) is closed to make room.
type connPool struct {
	max, held int
	idle      map[*limitedConn]time.Time
	busy      map[*limitedConn]time.Time // the reserve's, by when accepted
}

// reserveHold is how long a reserve connection keeps its place against a
// new one.
const reserveHold = 100 * time.Millisecond

func newConnLimit(l net.Listener, max int) *connLimit {
	return &connLimit{Listener: l,
		pool:    connPool{max: max, idle: map[*limitedConn]time.Time{}},
		reserve: connPool{max: reservedConnections, idle: map[*limitedConn]time.Time{}, busy: map[*limitedConn]time.Time{}}}
}

type limitedConn struct {
	net.Conn
	l    *connLimit
	pool *connPool
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		defer c.l.mu.Unlock()
		delete(c.pool.idle, c)
		delete(c.pool.busy, c)
		c.pool.held--
	})
	return err
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

// take holds c in p if p has room, or once its longest idle is closed.
func (l *connLimit) take(p *connPool, c net.Conn) *limitedConn {
	l.mu.Lock()
	if p.held >= p.max {
		oldest := longest(p.idle, time.Now())
		if oldest == nil {
			oldest = longest(p.busy, time.Now().Add(-reserveHold))
		}
		if oldest == nil {
			l.mu.Unlock()
			return nil
		}
		delete(p.idle, oldest)
		delete(p.busy, oldest)
		l.mu.Unlock()
		oldest.Close() // gives its place back
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	if p.held >= p.max {
		return nil
	}
	p.held++
	lc := &limitedConn{Conn: c, l: l, pool: p}
	if p.busy != nil {
		p.busy[lc] = time.Now()
	}
	return lc
}

// longest is the connection of m listed the earliest, before before.
func longest(m map[*limitedConn]time.Time, before time.Time) *limitedConn {
	var oldest *limitedConn
	for c, since := range m {
		if since.Before(before) && (oldest == nil || since.Before(m[oldest])) {
			oldest = c
		}
	}
	return oldest
}

// connState tracks which connections are idle, for Accept to close.
func (l *connLimit) connState(c net.Conn, state http.ConnState) {
	lc := limited(c)
	if lc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle {
		lc.pool.idle[lc] = time.Now()
	} else {
		delete(lc.pool.idle, lc)
	}
}

// connContext marks the requests of a reserve connection.
func (l *connLimit) connContext(ctx context.Context, c net.Conn) context.Context {
	if lc := limited(c); lc != nil && lc.pool == &l.reserve {
		return hook.OnReserve(ctx)
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
