package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/bits"
	"slices"
	"sync"
	"time"

	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/wire"
)

// The cost model: the heap a request may take at its peak, charged before
// it is spent. The factors are measured in BENCHMARKS.md ("What a request
// costs", "Bodies, connections and edits"); each holds at the peak it bounds.
const (
	// decodeCost is charged per body byte as it arrives, on top of the
	// read buffer: the decoded request and the answer it gives.
	decodeCost = 4
	// requestCost is charged once, before the answer is computed: what a
	// small request costs beyond its body.
	requestCost = 64 << 10
	// valueCost is charged per JSON object or array of a body, counted
	// before it is decoded: a 3-byte {} can decode into a struct many times
	// its size (TestDecodeCostPerValue measures each kind), so a body of
	// empty objects costs what it would build.
	valueCost = 2 << 10
	// Read buffers double from minBodyBuffer, so that a request that
	// sends a few bytes holds no more than it; those of up to
	// maxPooledBuffer are reused (every recorded request fits one:
	// testdata/metacontroller), larger ones go back to the GC, so that a
	// burst of them does not stay.
	minBodyBuffer   = 4 << 10
	pooledSizes     = 7
	maxPooledBuffer = minBodyBuffer << (pooledSizes - 1)
)

// syncCost is what a decoded sync request is charged before Sync, on top of
// its body: requestCost, and the most that answering it takes (hook.Cost:
// its config's parse).
func syncCost(req *wire.SyncRequest) int64 {
	return requestCost + hook.Cost(req)
}

// DefaultBudgetWait is how long a request waits for the budget to have room
// before it is answered 429: long enough for the requests computing ahead
// of it to finish, even one with the largest config (BenchmarkHTTP and
// monocleconfig's BenchmarkParse measure how long they take; BENCHMARKS.md).
const DefaultBudgetWait = time.Second

var (
	// errOverBudget: the budget had no room within the wait, or an older
	// request needed the room. Answered 429 with Retry-After.
	errOverBudget = errors.New("the hook's memory budget is in use by other requests")
	// errBeyondBudget: this request alone costs more than the whole
	// budget; waiting cannot help. Answered 413.
	errBeyondBudget = errors.New("the request would take more memory than the hook's whole budget")
)

// Budget bounds the heap that the requests in flight may take, so that no
// request, and no number of them, can take the process past its memory
// limit. Each request holds a claim that grows as its body arrives, once
// its JSON values are counted, and once more before its answer is computed.
//
// Room is given oldest request first. A request that does not fit waits
// for the requests computing their answer (they free their room once
// answered, and are never interrupted); if even that would not make it
// fit, it takes room back from younger requests still reading their body
// or waiting, youngest first: they are answered 429, and Metacontroller
// sends them again. Without that, requests holding part of their body each
// would wait for one another until all of them time out.
type Budget struct {
	limit int64
	wait  time.Duration

	mu      sync.Mutex
	used    int64
	claims  []*claim      // of the requests in flight, oldest first
	changed chan struct{} // closed when room may have been freed
}

// NewBudget makes a budget of limit bytes; a request waits at most wait for
// room.
func NewBudget(limit int64, wait time.Duration) *Budget {
	return &Budget{limit: limit, wait: wait}
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse is what the requests in flight hold, in bytes.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// claim is one request's share of the budget.
type claim struct {
	b         *Budget
	held      int64
	want      int64     // > 0 while waiting for that much
	computing bool      // past its last growth: never taken back
	wounded   bool      // taken back: the request must give up
	deadline  time.Time // of the wait, over the whole request
	// interrupt, if not nil, makes the request's blocked body read return
	// once its room is taken back. It is called only while the claim is
	// in b.claims: once the request is over, it would cut the
	// connection's next request instead.
	interrupt func()
}

// claim starts a request's share.
func (b *Budget) claim(interrupt func()) *claim {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := &claim{b: b, interrupt: interrupt}
	b.claims = append(b.claims, c)
	return c
}

// grow adds n bytes to the claim, waiting for room at most the budget's
// wait over the whole request. final marks the last growth: the request
// then computes its answer and can no longer be taken back.
func (c *claim) grow(ctx context.Context, n int64, final bool) error {
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		switch {
		case c.wounded:
			return errOverBudget
		case c.held+n > b.limit:
			return errBeyondBudget
		case b.used+n <= b.limit && !b.olderWaiting(c):
			c.want, c.computing = 0, final
			c.held += n
			b.used += n
			return nil
		}
		c.want = n
		if b.takeBack(c, n) {
			continue
		}
		if c.deadline.IsZero() {
			c.deadline = time.Now().Add(b.wait)
		}
		if ctx.Err() != nil || !time.Now().Before(c.deadline) {
			c.want = 0
			b.notify() // younger ones may fit now that this one gave up
			return errOverBudget
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		wait, cancel := context.WithDeadline(ctx, c.deadline)
		b.mu.Unlock()
		select {
		case <-changed:
		case <-wait.Done():
		}
		cancel()
		b.mu.Lock()
	}
}

// takeBack takes room back for c, which needs n more, from the requests
// younger than c that are not computing, youngest first: only when room is
// short even once the requests computing are done, and only if all the
// younger ones hold would then make c fit. It says whether it took any.
func (b *Budget) takeBack(c *claim, n int64) bool {
	stays, takeable, younger := b.used, int64(0), false
	for _, y := range b.claims {
		switch {
		case y.computing:
			stays -= y.held
		case younger:
			takeable += y.held
		}
		younger = younger || y == c
	}
	if stays+n <= b.limit || stays-takeable+n > b.limit {
		return false
	}
	for i := len(b.claims) - 1; b.claims[i] != c && stays+n > b.limit; i-- {
		if y := b.claims[i]; !y.computing && (y.held > 0 || y.want > 0) {
			stays -= y.held
			b.used -= y.held
			y.held, y.want, y.wounded = 0, 0, true
			if y.interrupt != nil {
				y.interrupt()
			}
		}
	}
	b.notify()
	return true
}

// release gives the claim's room back when its request is over.
func (c *claim) release() {
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= c.held
	c.held, c.want, c.wounded = 0, 0, true
	b.claims = slices.DeleteFunc(b.claims, func(o *claim) bool { return o == c })
	b.notify()
}

// isWounded says whether an older request took the claim's room back.
func (c *claim) isWounded() bool {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	return c.wounded
}

// olderWaiting says whether a request older than c waits for room: c must
// not take it first. c is in b.claims: release, which takes it out,
// wounds it, and grow asks no more of a wounded claim.
func (b *Budget) olderWaiting(c *claim) bool {
	return slices.ContainsFunc(b.claims[:slices.Index(b.claims, c)], func(o *claim) bool { return o.want > 0 })
}

// notify tells every waiting claim to look again.
func (b *Budget) notify() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

var bufferPools [pooledSizes]sync.Pool

// getBuffer is an empty buffer of size bytes; a pooled one for the sizes
// minBodyBuffer << i, i < pooledSizes.
func getBuffer(size int) []byte {
	if i := bits.Len(uint(size/minBodyBuffer)) - 1; i < pooledSizes && size == minBodyBuffer<<i {
		if b, ok := bufferPools[i].Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, size)
}

// putBuffer hands a buffer of a pooled size back for reuse.
func putBuffer(b []byte) {
	if i := bits.Len(uint(cap(b)/minBodyBuffer)) - 1; i < pooledSizes && cap(b) == minBodyBuffer<<i {
		b = b[:0]
		bufferPools[i].Put(&b)
	}
}

// grownBuffer is b with twice the room; past the pooled sizes, no more than
// the size the request announced (total), if that is more than b holds: a
// buffer is charged, and a doubled buffer would take the largest Monocle
// the CRD admits (TestLargestMonocle) near the whole of the chart's budget
// (BENCHMARKS.md has the figures).
func grownBuffer(b []byte, total int64) []byte {
	size := 2 * cap(b)
	if cap(b) >= maxPooledBuffer && total > int64(cap(b)) {
		size = int(min(total, int64(size)))
	}
	bigger := append(getBuffer(size), b...)
	putBuffer(b)
	return bigger
}

// bodyCharge is what a body of n bytes in a buffer of capacity size is
// charged: the buffer, and the decoded request and answer of each byte.
// With the buffer between n and 2n bytes, that is 5 to 6 times n.
func bodyCharge(n, size int) int64 {
	return int64(size) + decodeCost*int64(n)
}

// jsonValues counts the objects and arrays of a JSON text, outside its
// strings: what decoding it builds beyond its bytes. It jumps over strings
// with IndexByte, so a body of long strings costs little to count.
func jsonValues(b []byte) int64 {
	var n int64
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			n++
		case '"':
			for i++; i < len(b); i++ { // to the closing quote
				j := bytes.IndexByte(b[i:], '"')
				if j < 0 {
					return n
				}
				i += j
				// A quote after an even number of backslashes is not escaped.
				if backslashes := i - len(bytes.TrimRight(b[:i], `\`)); backslashes%2 == 0 {
					break
				}
			}
		}
	}
	return n
}

// readBody reads r whole into a pooled buffer, growing c as bytes arrive
// (a buffer takes room once a read into it returns: a request that sends
// nothing holds nothing). total is the size the request announces, -1 if
// none: only a hint. The buffer is returned even with an error; putBuffer
// takes it back.
func readBody(ctx context.Context, r io.Reader, total int64, c *claim) ([]byte, error) {
	buf := getBuffer(minBodyBuffer)
	var charged int64
	for {
		if len(buf) == cap(buf) {
			buf = grownBuffer(buf, total)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if charge := bodyCharge(len(buf), cap(buf)); charge > charged {
			if err := c.grow(ctx, charge-charged, false); err != nil {
				return buf, err
			}
			charged = charge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
