package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/api/v1alpha1"
	"github.com/change-metrics/monocle-hook/hook"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/printable"
)

// DefaultMemoryBudget is the budget when none is given: a quarter of the
// chart's 144 MiB memory limit, as main derives it from a container's limit.
const DefaultMemoryBudget = 36 << 20

// retryAfterSeconds is the Retry-After of a 429. Metacontroller (v4.17)
// requeues the Monocle after that many seconds, without backoff and
// without a SyncError event; a burst that fills the budget is over by
// then (make attack's bursts; BENCHMARKS.md, "Under attack").
const retryAfterSeconds = 1

// Server is the HTTP face of Sync: it reads, decodes, calls Sync and
// encodes, within a memory budget.
type Server struct {
	env      hook.Env
	log      *slog.Logger
	metrics  *metrics
	gatherer prometheus.Gatherer
	budget   *Budget
	draining atomic.Bool
}

// Options tune a Server; the zero value takes the defaults.
type Options struct {
	// MemoryBudget bounds, in bytes, the heap the /sync and /customize
	// requests in flight may take (see Budget). 0: DefaultMemoryBudget.
	MemoryBudget int64
	// BudgetWait is the longest a request waits for room in the budget
	// before it is answered 429. 0: DefaultBudgetWait.
	BudgetWait time.Duration
}

// New registers the hook's metrics with reg.
func New(env hook.Env, log *slog.Logger, reg *prometheus.Registry, opts Options) *Server {
	budget := NewBudget(cmp.Or(opts.MemoryBudget, DefaultMemoryBudget), cmp.Or(opts.BudgetWait, DefaultBudgetWait))
	return &Server{env: env, log: log, metrics: newMetrics(reg, budget), gatherer: reg, budget: budget}
}

// Drain makes /readyz fail, so that endpoints stop routing here while the
// server finishes the syncs it has.
func (s *Server) Drain() { s.draining.Store(true) }

// Handler routes the hook's endpoints. Only /sync and /customize take
// from the memory budget: the health endpoints and /metrics answer however
// full it is.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(s.recoverPanic)
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, r.Method+" is not allowed here", http.StatusMethodNotAllowed)
	})
	r.Post("/sync", s.budgeted(handlerSync, s.sync))
	r.Post("/customize", s.budgeted(handlerCustomize, s.customize))
	ok := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }
	r.Get("/healthz", ok)
	r.Get("/livez", ok)
	r.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		ok(w, r)
	})
	r.Handle("/metrics", promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{}))
	return r
}

type reserveKey struct{}

// OnReserve marks the context of a connection accepted beyond the
// server's connection limit, kept for the health endpoints and /metrics:
// /sync and /customize answer it 503.
func OnReserve(ctx context.Context) context.Context {
	return context.WithValue(ctx, reserveKey{}, true)
}

const (
	handlerSync      = "sync"
	handlerCustomize = "customize"
)

// call is one /sync or /customize request: its claim on the budget and
// what it is counted as.
type call struct {
	s       *Server
	handler string
	start   time.Time
	result  string
	claim   *claim
	// bodyBytes is the size of the body decode read.
	bodyBytes int
}

// budgeted serves /sync or /customize with serve, which answers within the
// request's claim on the budget; on a reserve connection, it answers 503.
func (s *Server) budgeted(handler string, serve func(*call, http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(reserveKey{}) != nil {
			s.tooManyConnections(w, handler)
			return
		}
		rc := http.NewResponseController(w)
		// An older request that needs the room this one holds while it
		// waits for its body makes that read return at once (and the
		// request 429).
		interrupt := func() { rc.SetReadDeadline(time.Now()) }
		c := &call{s: s, handler: handler, start: time.Now(), result: resultError, claim: s.budget.claim(interrupt)}
		defer func() {
			c.claim.release()
			s.metrics.observe(handler, c.result, time.Since(c.start))
		}()
		serve(c, w, r)
	}
}

// tooManyConnections answers 503 on a reserve connection: the hook holds
// as many connections as it takes; Metacontroller retries.
func (s *Server) tooManyConnections(w http.ResponseWriter, handler string) {
	s.metrics.errors.WithLabelValues(handler, "too_many_connections").Inc()
	s.metrics.observe(handler, resultError, 0)
	const msg = "the hook holds as many connections as it takes; retry later\n"
	// Closed as soon as answered, unread body and all: the server would
	// otherwise keep it half a second to drain, holding a reserve place.
	if conn, buf, err := http.NewResponseController(w).Hijack(); err == nil {
		fmt.Fprintf(buf, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
		buf.Flush()
		conn.Close()
		return
	}
	w.Header().Set("Connection", "close")
	http.Error(w, msg, http.StatusServiceUnavailable)
}

// syncFailure is the status and the reason label of a Sync error: a child
// outside its Monocle has its own, which always alerts.
func syncFailure(err error) (code int, reason string) {
	switch {
	case errors.Is(err, hook.ErrBadRequest):
		return http.StatusBadRequest, "malformed"
	case errors.Is(err, hook.ErrOutsideMonocle):
		return http.StatusInternalServerError, "outside_monocle"
	}
	return http.StatusInternalServerError, "internal"
}

func (s *Server) sync(c *call, w http.ResponseWriter, r *http.Request) {
	var req wire.SyncRequest
	if !c.decode(w, r, &req) || !c.checkParent(w, req.Parent) || !c.reserve(w, r.Context(), syncCost(&req)) {
		return
	}
	req.Size = c.bodyBytes
	env := s.env
	env.Context = r.Context()
	resp, err := hook.Sync(&req, env)
	if err != nil {
		if r.Context().Err() != nil {
			// The client has gone: no one reads an answer.
			s.metrics.errors.WithLabelValues(handlerSync, "canceled").Inc()
			return
		}
		code, reason := syncFailure(err)
		c.fail(w, code, reason, err.Error())
		return
	}
	if !c.answer(w, resp, "") {
		return
	}
	s.metrics.countChildren(resp.Children)
	if condition.Refused(resp.Status) != nil {
		s.metrics.errors.WithLabelValues(handlerSync, "invalid_spec").Inc()
	}
	md := req.Parent.Metadata
	s.log.Info("sync",
		"namespace", md.Namespace, "name", md.Name, "generation", md.Generation,
		"children", len(resp.Children), "ready", conditionStatus(resp.Status, condition.ConditionReady),
		"specApplied", conditionStatus(resp.Status, condition.ConditionSpecApplied), "seconds", time.Since(c.start).Seconds())
}

func (s *Server) customize(c *call, w http.ResponseWriter, r *http.Request) {
	var req wire.CustomizeRequest
	if !c.decode(w, r, &req) || !c.checkParent(w, req.Parent) || !c.reserve(w, r.Context(), requestCost) {
		return
	}
	resp, err := hook.Customize(&req)
	if err != nil {
		c.fail(w, http.StatusBadRequest, "malformed", err.Error())
		return
	}
	if !c.answer(w, resp, "\n") {
		return
	}
	md := req.Parent.Metadata
	s.log.Debug("customize", "namespace", md.Namespace, "name", md.Name, "rules", len(resp.RelatedResources))
}

// decode reads the whole body into a pooled buffer, taking its cost from
// the budget as it arrives, then decodes it into v; or answers 413, 429,
// 408 or 400. The buffer grows with what has arrived, never with what
// Content-Length announces.
func (c *call) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.ContentLength > wire.MaxBodyBytes {
		c.refuse(w, &http.MaxBytesError{Limit: wire.MaxBodyBytes})
		return false
	}
	body := &pacedBody{r: http.MaxBytesReader(w, r.Body, wire.MaxBodyBytes), rc: http.NewResponseController(w), start: time.Now()}
	buf, err := readBody(r.Context(), body, r.ContentLength, c.claim)
	defer putBuffer(buf)
	if err != nil {
		c.refuse(w, err)
		return false
	}
	c.bodyBytes = len(buf)
	// What the body decodes into, counted before it is built.
	switch err := c.claim.grow(r.Context(), valueCost*jsonValues(buf), false); {
	case errors.Is(err, errBeyondBudget):
		c.fail(w, http.StatusRequestEntityTooLarge, "too_large", "the request holds too many JSON objects and arrays to decode within the hook's memory budget")
		return false
	case err != nil:
		c.refuse(w, err)
		return false
	}
	if err := json.Unmarshal(buf, v); err != nil {
		c.fail(w, http.StatusBadRequest, "malformed", "request body is not a "+c.handler+" request: "+decodeError(err))
		return false
	}
	return true
}

// refuse answers a request that its body or the budget failed: 413, 429,
// 408 or 400.
func (c *call) refuse(w http.ResponseWriter, err error) {
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		c.fail(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body is over %d bytes", wire.MaxBodyBytes))
	case errors.Is(err, errOverBudget):
		c.overBudget(w)
	case errors.Is(err, errBeyondBudget):
		c.fail(w, http.StatusRequestEntityTooLarge, "too_large", err.Error())
	case c.claim.isWounded():
		// The read was cut for an older request.
		c.overBudget(w)
	case errors.As(err, &netErr) && netErr.Timeout():
		c.fail(w, http.StatusRequestTimeout, "timeout", "the request body did not arrive within the read timeout")
	default:
		c.fail(w, http.StatusBadRequest, "malformed", "reading the request body failed")
	}
}

// BodyTimeout is the longest a request's body may take to arrive (the
// server's ReadTimeout: main sets it). Metacontroller's hook timeout is 10
// s: a body still arriving after it has no one waiting for the answer.
const BodyTimeout = 10 * time.Second

// A body must also arrive at minBodyRate, after a grace: a client that
// sends most of a body and stalls holds the budget its bytes are charged
// for about a second, not for the whole BodyTimeout, so that stalled
// bodies cannot keep what other requests need (the 408 comes then).
// Metacontroller sends a body at the pod network's speed.
const (
	minBodyRate  = 256 << 10 // bytes per second
	bodyRateFrom = time.Second
)

// pacedBody reads a request body, each read with the deadline its
// progress allows: bodyRateFrom after the start, plus a second per
// minBodyRate bytes received, within BodyTimeout.
type pacedBody struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	got   int
}

func (b *pacedBody) Read(p []byte) (int, error) {
	allowed := bodyRateFrom + time.Duration(b.got)*time.Second/minBodyRate
	if err := b.rc.SetReadDeadline(b.start.Add(min(allowed, BodyTimeout))); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return 0, err
	}
	n, err := b.r.Read(p)
	b.got += n
	return n, err
}

// reserve takes the rest of the request's cost from the budget before it
// is computed, or answers 429 or 413.
func (c *call) reserve(w http.ResponseWriter, ctx context.Context, n int64) bool {
	if err := c.claim.grow(ctx, n, true); err != nil {
		c.refuse(w, err)
		return false
	}
	return true
}

// checkParent answers 400 unless the parent is a Monocle of the CRD's group
// and version. A CompositeController for another resource pointed at this
// hook would otherwise have that resource's objects answered as Monocles.
func (c *call) checkParent(w http.ResponseWriter, p *wire.Parent) bool {
	want := instance.Group + "/" + instance.Version
	switch {
	case p == nil:
		c.fail(w, http.StatusBadRequest, "malformed", "the request has no parent")
	case p.APIVersion != want || p.Kind != instance.Kind:
		c.fail(w, http.StatusBadRequest, "malformed", fmt.Sprintf("the parent is a %s of %s, not a %s of %s",
			quoteShort(p.Kind), quoteShort(p.APIVersion), instance.Kind, want))
	default:
		return true
	}
	return false
}

// quoteShort quotes a value the request chose, on one line and at most 64
// bytes of it.
func quoteShort(s string) string {
	if len(s) > 64 {
		return printable.Quote(s[:64]) + "..."
	}
	return printable.Quote(s)
}

// answer encodes resp, then suffix, writes it and flushes it, so that a
// write that fails (a client gone, the write timeout) is seen here,
// counted and logged as an error, rather than after the handler where
// nothing sees it. Content-Length is set, so the flush does not turn the
// answer into a chunked one.
func (c *call) answer(w http.ResponseWriter, resp any, suffix string) bool {
	body, err := json.Marshal(resp)
	if err != nil {
		c.fail(w, http.StatusInternalServerError, "internal", "encoding the answer: "+err.Error())
		return false
	}
	body = append(body, suffix...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if _, err = w.Write(body); err == nil {
		if err = http.NewResponseController(w).Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil
		}
	}
	if err != nil {
		c.s.metrics.errors.WithLabelValues(c.handler, "write_failed").Inc()
		c.s.log.Error(c.handler+" answer not delivered", "handler", c.handler, "reason", "write_failed",
			"error", err.Error(), "seconds", time.Since(c.start).Seconds())
		return false
	}
	c.result = resultOK
	return true
}

// overBudget answers 429 with Retry-After: Metacontroller retries the
// Monocle after that many seconds.
func (c *call) overBudget(w http.ResponseWriter) {
	c.result = resultOverBudget
	c.s.metrics.errors.WithLabelValues(c.handler, "over_budget").Inc()
	c.s.log.Warn(c.handler+" refused: the memory budget is in use", "handler", c.handler, "status", http.StatusTooManyRequests,
		"reason", "over_budget", "budgetBytes", c.s.budget.Limit())
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	http.Error(w, errOverBudget.Error()+"; retry later", http.StatusTooManyRequests)
}

// fail answers one line of text: Metacontroller puts it in a SyncError event.
func (c *call) fail(w http.ResponseWriter, code int, reason, msg string) {
	c.s.metrics.errors.WithLabelValues(c.handler, reason).Inc()
	c.s.log.Warn(c.handler+" failed", "handler", c.handler, "status", code, "reason", reason, "error", msg)
	http.Error(w, msg, code)
}

func (s *Server) recoverPanic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.metrics.errors.WithLabelValues(handlerOf(r.URL.Path), "panic").Inc()
				s.log.Error("panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// handlerOf is the handler label of a request's path.
func handlerOf(path string) string {
	if h := strings.TrimPrefix(path, "/"); h == handlerSync || h == handlerCustomize {
		return h
	}
	return "other"
}

// decodeError says where and how a body failed to decode, never quoting it:
// some decoders' errors (a timestamp's, for one) repeat the value, and the
// body may hold secrets. The answer goes to a log line and to Metacontroller's
// SyncError event.
func decodeError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s must be a %s, not a JSON %s (byte %d)", typ.Field, typ.Type, typ.Value, typ.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the body ends before its JSON does"
	default:
		return "a value does not have its field's format"
	}
}

func conditionStatus(s v1alpha1.MonocleStatus, condition string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(s.Conditions, condition); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}
