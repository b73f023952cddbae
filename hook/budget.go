package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
)

// The cost model: the heap a request may take at its peak, estimated before
// it is spent. Figures from BenchmarkRequestHeap (BENCHMARKS.md, "What a
// request costs"): the peak live heap of the whole /sync handler, sampled
// under GOGC=1, against the body's size and the config's.
const (
	// decodeCost is charged per body byte as it arrives, on top of the
	// read buffer's size: the decoded request and the answer. With the
	// buffer (1 to 2 bytes per byte), that is 5 to 6 times the body: the
	// peak was 4.2 to 4.8 times on the 421 KB requests (100 children,
	// with the spec valid or not). On the 44 KB ones the peak is within the
	// sampling's noise (0.6 to 5.7 times); requestCost covers them.
	decodeCost = 4
	// requestCost is charged once per request before Sync: what a request
	// costs beyond its body (the answer of seven children built from
	// scratch, the log line). The 5.8 KB new-parent request peaks at 12 KB
	// to 82 KB.
	requestCost = 64 << 10
	// valueCost is charged per JSON object or array in a body, counted
	// before it is decoded: what each may decode into beyond its bytes. A
	// 3-byte {} can become a struct of a kilobyte or more: measured per {}
	// (TestDecodeCostPerValue), a Job in the children's map holds 1.5 KB
	// live, a volumeClaimTemplate or a container 0.5 KB live and up to
	// 2.7 KB allocated while its list grows. A real request holds one per
	// 64 to 69 bytes: 650 in the recorded 44 KB ones, 1.3 MiB of charge.
	valueCost = 2 << 10
	// minBodyBuffer is the first read buffer: a request that sends a few
	// bytes holds no more than this.
	minBodyBuffer = 4 << 10
	// maxPooledBuffer (256 KiB) is the largest read buffer kept for reuse:
	// the recorded requests are 6 to 52 KB. Larger ones go back to the GC,
	// so that a burst of large bodies does not stay in the pool.
	pooledSizes     = 7
	maxPooledBuffer = minBodyBuffer << (pooledSizes - 1)
)

// syncCost is what a decoded sync request is charged before Sync, on top of
// its body: requestCost, and the most that parsing its config may take.
// Sync parses one config.yaml (the user's ConfigMap's, the spec's, or the
// generated one's): each candidate's cost is bounded from its bytes by
// monocleconfig.ParseCostOf, and the largest is charged.
func syncCost(req *SyncRequest) int64 {
	var spec struct {
		Config string `json:"config"`
	}
	// A spec that does not decode parses no config.
	_ = json.Unmarshal(req.Parent.Spec, &spec)
	cost := monocleconfig.ParseCostOf([]byte(spec.Config))
	// The generated ConfigMap is a source; the mounted copies are not.
	candidates := []*corev1.ConfigMap{observe(req.Children).ConfigMaps[instance.For(req.Parent.Metadata.Name).API]}
	for _, cm := range req.Related.ConfigMaps {
		candidates = append(candidates, cm)
	}
	for _, cm := range candidates {
		if cm != nil {
			cost = max(cost, monocleconfig.ParseCostOf([]byte(cm.Data[configFile])))
		}
	}
	return requestCost + cost
}

// DefaultBudgetWait is how long a request waits for the budget to have room
// before it is answered 429: a normal sync takes about a millisecond, one
// with a 1 MiB config about a hundred.
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
// limit. Each request holds a claim that grows as its body arrives and once
// more before Sync, by the cost model above.
//
// Room is given oldest request first. A request that needs more than is
// free takes it back from younger requests that are still reading their
// body or waiting (they are answered 429 and retried later by
// Metacontroller): without that, requests holding half their body each
// could wait for one another until all of them time out. A request that
// is computing its answer is never interrupted: it frees its room soon.
type Budget struct {
	limit int64
	wait  time.Duration

	mu     sync.Mutex
	used   int64
	seq    uint64
	claims []*claim // every claim holding room or waiting for it, oldest first
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
	seq       uint64
	held      int64
	want      int64         // > 0 while waiting for that much
	computing bool          // past its last growth: never taken back
	wounded   bool          // taken back: the request must give up
	tracked   bool          // in b.claims
	wake      chan struct{} // signalled when room may have been freed
	deadline  time.Time     // of the wait; set by the first one

	// interrupt makes a blocked body read return. It is called outside
	// the budget's lock, so under its own, and never once the request is
	// over: it would cut the connection's next request instead.
	imu       sync.Mutex
	interrupt func()
	over      bool
}

// claim starts a request's share. interrupt, if not nil, is called (without
// the budget's lock) when an older request takes the room back while this
// one may be blocked reading its body.
func (b *Budget) claim(interrupt func()) *claim {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return &claim{b: b, seq: b.seq, wake: make(chan struct{}, 1), interrupt: interrupt}
}

// grow adds n bytes to the claim, waiting for room at most the budget's
// wait over the whole request. final marks the last growth: the request
// then computes its answer and can no longer be taken back.
func (c *claim) grow(ctx context.Context, n int64, final bool) error {
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if c.wounded {
			return errOverBudget
		}
		if c.held+n > b.limit {
			return errBeyondBudget
		}
		if b.used+n <= b.limit && !b.olderWaiting(c) {
			c.want = 0
			c.computing = final
			c.held += n
			b.used += n
			b.track(c)
			return nil
		}
		// Requests computing their answer free their room within
		// milliseconds: wait for them. If this one would not fit even
		// then, take room back from younger requests still reading or
		// waiting, youngest first, until it would; unless even all they
		// hold would not do: then wait for older ones to finish (younger
		// ones cannot grow meanwhile), and look again.
		c.want = n
		b.track(c)
		var interrupted []*claim
		if stays := b.used - b.computingHeld(); stays+n > b.limit && stays-b.takeable(c)+n <= b.limit {
			for i := len(b.claims) - 1; i >= 0 && stays+n > b.limit; i-- {
				y := b.claims[i]
				if y.seq <= c.seq {
					break
				}
				if y.computing || y.wounded {
					continue
				}
				stays -= y.held
				b.used -= y.held
				y.held, y.wounded = 0, true
				y.signal()
				interrupted = append(interrupted, y)
			}
		}
		if len(interrupted) > 0 {
			b.prune()
			b.mu.Unlock()
			for _, y := range interrupted {
				y.interruptRead()
			}
			b.mu.Lock()
			continue
		}
		if c.deadline.IsZero() {
			c.deadline = time.Now().Add(b.wait)
		}
		left := time.Until(c.deadline)
		if left <= 0 {
			c.want = 0
			b.prune()
			b.wakeAll() // younger ones may fit now that this one gave up
			return errOverBudget
		}
		if timer == nil {
			timer = time.NewTimer(left)
		} else {
			timer.Reset(left)
		}
		b.mu.Unlock()
		select {
		case <-c.wake:
		case <-timer.C:
		case <-ctx.Done():
		}
		b.mu.Lock()
		if ctx.Err() != nil {
			c.want = 0
			b.prune()
			b.wakeAll()
			return errOverBudget
		}
	}
}

// release gives the claim's room back when its request is over.
func (c *claim) release() {
	c.imu.Lock()
	c.over = true
	c.imu.Unlock()
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= c.held
	c.held, c.want, c.wounded = 0, 0, true
	b.prune()
	b.wakeAll()
}

// isWounded says whether an older request took the claim's room back.
func (c *claim) isWounded() bool {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	return c.wounded
}

func (c *claim) interruptRead() {
	c.imu.Lock()
	defer c.imu.Unlock()
	if !c.over && c.interrupt != nil {
		c.interrupt()
	}
}

func (c *claim) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// computingHeld is the room held by requests computing their answer.
func (b *Budget) computingHeld() int64 {
	var n int64
	for _, c := range b.claims {
		if c.computing {
			n += c.held
		}
	}
	return n
}

// takeable is the room that requests younger than c hold and could give
// back: those not yet computing.
func (b *Budget) takeable(c *claim) int64 {
	var n int64
	for _, y := range b.claims {
		if y.seq > c.seq && !y.computing && !y.wounded {
			n += y.held
		}
	}
	return n
}

// olderWaiting says whether a request older than c waits for room: c must
// not take it first.
func (b *Budget) olderWaiting(c *claim) bool {
	for _, o := range b.claims {
		if o.seq >= c.seq {
			return false
		}
		if o.want > 0 {
			return true
		}
	}
	return false
}

// track keeps c in b.claims (in age order) while it holds or wants room.
func (b *Budget) track(c *claim) {
	if c.tracked {
		return
	}
	c.tracked = true
	i := len(b.claims)
	for i > 0 && b.claims[i-1].seq > c.seq {
		i--
	}
	b.claims = append(b.claims, nil)
	copy(b.claims[i+1:], b.claims[i:])
	b.claims[i] = c
}

// prune drops the claims that neither hold nor want room.
func (b *Budget) prune() {
	kept := b.claims[:0]
	for _, c := range b.claims {
		if (c.held > 0 || c.want > 0) && !c.wounded {
			kept = append(kept, c)
		} else {
			c.tracked = false
		}
	}
	clear(b.claims[len(kept):])
	b.claims = kept
}

// wakeAll tells every waiting claim to look again.
func (b *Budget) wakeAll() {
	for _, c := range b.claims {
		if c.want > 0 {
			c.signal()
		}
	}
}

// Read buffers come in pooled sizes, each twice the one before, from
// minBodyBuffer to maxPooledBuffer; a body outgrows one into the next, so
// that a buffer is at most twice what has arrived (or minBodyBuffer). Past
// maxPooledBuffer it grows as append grows a slice (by about a quarter) and
// is left to the GC.
var bufferPools [pooledSizes]sync.Pool

func pooledSize(i int) int { return minBodyBuffer << i }

// getBuffer is an empty buffer of at least n bytes of capacity.
func getBuffer(n int) []byte {
	for i := range bufferPools {
		if size := pooledSize(i); n <= size {
			if b, ok := bufferPools[i].Get().(*[]byte); ok {
				return (*b)[:0]
			}
			return make([]byte, 0, size)
		}
	}
	return make([]byte, 0, n)
}

// putBuffer hands a buffer of one of the pooled sizes back for reuse.
func putBuffer(b []byte) {
	for i := range bufferPools {
		if cap(b) == pooledSize(i) {
			b = b[:0]
			bufferPools[i].Put(&b)
			return
		}
	}
}

// grownBuffer is b with room for more: the next pooled size up; past the
// largest, a quarter more, or up to the size the request announced
// (total) but never more than twice what has arrived, so that a large body
// is copied once or twice rather than at every quarter.
func grownBuffer(b []byte, total int64) []byte {
	var bigger []byte
	if cap(b) < maxPooledBuffer {
		bigger = getBuffer(cap(b) + 1)
	} else {
		size := cap(b) + cap(b)/4
		if total > int64(size) {
			size = int(min(total, 2*int64(cap(b))))
		}
		bigger = make([]byte, 0, size)
	}
	bigger = append(bigger, b...)
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
				backslashes := 0
				for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
					backslashes++
				}
				if backslashes%2 == 0 {
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
