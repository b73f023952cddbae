package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxBodyBytes bounds a sync request. A real one with seven children is
// about 44 KiB; 100 children stay well under 1 MiB.
const MaxBodyBytes = 4 << 20

// Server is the HTTP face of Sync: it decodes, calls Sync and encodes.
type Server struct {
	env      Env
	log      *slog.Logger
	metrics  *metrics
	gatherer prometheus.Gatherer
	draining atomic.Bool
}

// NewServer registers the hook's metrics with reg.
func NewServer(env Env, log *slog.Logger, reg *prometheus.Registry, version string) *Server {
	return &Server{env: env, log: log, metrics: newMetrics(reg, version), gatherer: reg}
}

// Drain makes /readyz fail, so that endpoints stop routing here while the
// server finishes the syncs it has.
func (s *Server) Drain() { s.draining.Store(true) }

// Handler routes the hook's endpoints.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(s.recoverPanic)
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, r.Method+" is not allowed here", http.StatusMethodNotAllowed)
	})
	r.Post("/sync", s.sync)
	r.Post("/customize", s.customize)
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

func (s *Server) sync(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	result := "error"
	defer func() { s.metrics.observe(result, time.Since(start)) }()
	var req SyncRequest
	if !s.decode(w, r, &req, "sync") {
		return
	}
	resp, err := Sync(&req, s.env)
	if err != nil {
		if errors.Is(err, ErrBadRequest) {
			s.fail(w, http.StatusBadRequest, "malformed", err.Error())
			return
		}
		s.fail(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	body, err := json.Marshal(resp)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "internal", "encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)

	result = "ok"
	elapsed := time.Since(start)
	s.metrics.countChildren(resp.Children)
	if resp.Status.Refused() != nil {
		s.metrics.errors.WithLabelValues("invalid_spec").Inc()
	}
	md := req.Parent.Metadata
	s.log.Info("sync",
		"namespace", md.Namespace, "name", md.Name, "generation", md.Generation,
		"children", len(resp.Children), "ready", conditionStatus(resp.Status, ConditionReady),
		"specApplied", conditionStatus(resp.Status, ConditionSpecApplied), "seconds", elapsed.Seconds())
}

func (s *Server) customize(w http.ResponseWriter, r *http.Request) {
	var req CustomizeRequest
	if !s.decode(w, r, &req, "customize") {
		return
	}
	resp, err := Customize(&req)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "malformed", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// decode reads the whole body into v, or answers 413 or 400. The body is
// read in one buffer sized from Content-Length, then decoded in one pass:
// json.Decoder would grow its buffer step by step and scan the body twice.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any, what string) bool {
	var body bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= MaxBodyBytes {
		body.Grow(int(n) + bytes.MinRead)
	}
	_, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.fail(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body is over %d bytes", MaxBodyBytes))
		return false
	case err != nil:
		s.fail(w, http.StatusBadRequest, "malformed", "reading the request body failed")
		return false
	}
	if err := json.Unmarshal(body.Bytes(), v); err != nil {
		s.fail(w, http.StatusBadRequest, "malformed", "request body is not a "+what+" request: "+decodeError(err))
		return false
	}
	return true
}

// fail answers one line of text: Metacontroller puts it in a SyncError event.
func (s *Server) fail(w http.ResponseWriter, code int, reason, msg string) {
	s.metrics.errors.WithLabelValues(reason).Inc()
	s.log.Warn("sync failed", "status", code, "reason", reason, "error", msg)
	http.Error(w, msg, code)
}

func (s *Server) recoverPanic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.metrics.errors.WithLabelValues("panic").Inc()
				s.log.Error("panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
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

func conditionStatus(s Status, condition string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(s.Conditions, condition); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}
