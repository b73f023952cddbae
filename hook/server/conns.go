package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// ReservedConnections are accepted beyond the connection limit for the
// kubelet's probes and Prometheus: on them the hook answers only its
// health endpoints and /metrics (OnReserve).
const ReservedConnections = 16

// DefaultConnectionsPerAddress is the most connections one remote address
// holds by default, of the 128 the hook holds by default: Metacontroller
// keeps one per sync in flight (its workers), far fewer; the rest stay for
// the other addresses.
const DefaultConnectionsPerAddress = 32

// ConnLimit bounds the connections the hook holds: each costs memory, and
// one hook serves every Monocle. At the limit, the connection idle the
// longest is closed to make room (a client reopens one at no cost;
// Metacontroller keeps at most 2 idle, Go's default), else the new one is
// taken on the reserve (the same way), else closed at once.
//
// The places are shared per remote address: one address holds at most
// perAddress of them, so that no one client (one that stalls its bodies,
// say) holds the places another needs. An address at its share makes room
// among its own connections only, the one idle the longest; if none is
// idle, its new connection goes to the reserve, where only the health
// endpoints and /metrics answer. Memory is bounded: a count per address
// holding a place, removed at zero.
type ConnLimit struct {
	net.Listener
	mu            sync.Mutex
	pool, reserve connPool
}

// connPool is a number of connections, each with since when it is idle or
// busy. A busy one is closed to make room only on the reserve, once held
// past ReserveHold: a health request or a scrape is over in milliseconds,
// so one held longer is a sync's 503 lingering or a client that stalls.
type connPool struct {
	max   int
	hold  time.Duration // 0: a busy connection keeps its place
	conns map[*limitedConn]connMark
	// perAddress > 0: the most places one remote address holds, and
	// addresses their count (no entry at zero).
	perAddress int
	addresses  map[string]int
}

type connMark struct {
	since time.Time
	idle  bool
}

// ReserveHold is how long a reserve connection keeps its place against a
// new one.
const ReserveHold = 100 * time.Millisecond

// NewConnLimit holds at most max connections of l, at most perAddress of
// them from one remote address (0, or max or more: no share but the
// total), and ReservedConnections more for the health endpoints and
// /metrics. Serve it with an http.Server whose ConnState and ConnContext
// are the ConnLimit's.
func NewConnLimit(l net.Listener, max, perAddress int) *ConnLimit {
	if perAddress >= max {
		perAddress = 0
	}
	return &ConnLimit{Listener: l,
		pool:    connPool{max: max, conns: map[*limitedConn]connMark{}, perAddress: perAddress, addresses: map[string]int{}},
		reserve: connPool{max: ReservedConnections, hold: ReserveHold, conns: map[*limitedConn]connMark{}}}
}

type limitedConn struct {
	net.Conn
	l       *ConnLimit
	pool    *connPool
	address string // the remote IP
}

// Close gives the connection's place back; once given, a second Close
// gives nothing.
func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.pool.drop(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// drop takes c's place back, if it holds one.
func (p *connPool) drop(c *limitedConn) {
	if _, held := p.conns[c]; !held {
		return
	}
	delete(p.conns, c)
	if p.perAddress > 0 {
		if p.addresses[c.address]--; p.addresses[c.address] <= 0 {
			delete(p.addresses, c.address)
		}
	}
}

// remoteAddress is c's remote IP: the key of its address's share (the
// port differs per connection).
func remoteAddress(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// Accept returns the next connection that gets a place.
func (l *ConnLimit) Accept() (net.Conn, error) {
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
// longest, or busy past p.hold, is closed; an address at its share makes
// room among its own connections only.
func (l *ConnLimit) take(p *connPool, c net.Conn) *limitedConn {
	address := remoteAddress(c)
	l.mu.Lock()
	now := time.Now()
	atShare := p.perAddress > 0 && p.addresses[address] >= p.perAddress
	var oldest *limitedConn
	if atShare || len(p.conns) >= p.max {
		for o, m := range p.conns {
			if (!atShare || o.address == address) &&
				(m.idle || p.hold > 0 && now.Sub(m.since) > p.hold) && (oldest == nil || m.since.Before(p.conns[oldest].since)) {
				oldest = o
			}
		}
		if oldest == nil {
			l.mu.Unlock()
			return nil
		}
		p.drop(oldest) // its place is the new one's
	}
	lc := &limitedConn{Conn: c, l: l, pool: p, address: address}
	p.conns[lc] = connMark{since: now}
	if p.perAddress > 0 {
		p.addresses[address]++
	}
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
	return lc
}

// ConnState tracks which connections are idle, for Accept to close: the
// http.Server's ConnState.
func (l *ConnLimit) ConnState(c net.Conn, state http.ConnState) {
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

// ConnContext marks the requests of a reserve connection: the
// http.Server's ConnContext.
func (l *ConnLimit) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if lc := limited(c); lc != nil && lc.pool == &l.reserve {
		return OnReserve(ctx)
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
