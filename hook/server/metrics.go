package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/change-metrics/monocle-hook/hook/wire"
)

// Results of a request, the result label of monocle_hook_sync_requests_total:
// over_budget is a 429 (Metacontroller retries after Retry-After), error
// any other failure, including an answer whose write failed.
const (
	resultOK         = "ok"
	resultError      = "error"
	resultOverBudget = "over_budget"
)

// errorReasons are the reason label's values of monocle_hook_sync_errors_total.
var errorReasons = []string{"malformed", "too_large", "timeout", "over_budget", "internal", "outside_monocle", "panic", "write_failed", "canceled", "too_many_connections", "invalid_spec"}

// metrics has no per-Monocle series: each replica sees only some syncs and
// is never told that a Monocle is gone. Per-Monocle readiness is read from
// the Monocles' status conditions instead.
//
// The request metrics keep the names they had when /sync was counted
// alone; the handler label (sync, customize) now tells the two hooks apart.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	children *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, budget *Budget) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monocle_hook_sync_requests_total",
			Help: "Hook requests answered, by handler (sync, customize) and result (ok, error, over_budget).",
		}, []string{"handler", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "monocle_hook_sync_duration_seconds",
			Help:    "Time to read, decode, compute and write one hook request, in seconds, by handler.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"handler"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monocle_hook_sync_errors_total",
			Help: "Hook requests that failed or could not be honoured, by handler and reason: " +
				"malformed, too_large, timeout, over_budget, internal, outside_monocle, panic, write_failed, invalid_spec.",
		}, []string{"handler", "reason"}),
		children: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monocle_hook_desired_children_total",
			Help: "Children answered in successful syncs, by kind.",
		}, []string{"kind"}),
	}
	budgetLimit := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "monocle_hook_memory_budget_bytes",
		Help: "The memory budget of the requests in flight (--memory-budget), in bytes.",
	}, func() float64 { return float64(budget.Limit()) })
	budgetInUse := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "monocle_hook_memory_budget_in_use_bytes",
		Help: "The part of the memory budget the requests in flight hold, in bytes.",
	}, func() float64 { return float64(budget.InUse()) })
	for _, handler := range []string{handlerSync, handlerCustomize} {
		for _, reason := range errorReasons {
			if reason != "invalid_spec" || handler == handlerSync {
				m.errors.WithLabelValues(handler, reason)
			}
		}
		for _, result := range []string{resultOK, resultError, resultOverBudget} {
			m.requests.WithLabelValues(handler, result)
		}
		m.duration.WithLabelValues(handler)
	}
	reg.MustRegister(m.requests, m.duration, m.errors, m.children, budgetLimit, budgetInUse,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(handler, result string, d time.Duration) {
	m.requests.WithLabelValues(handler, result).Inc()
	m.duration.WithLabelValues(handler).Observe(d.Seconds())
}

func (m *metrics) countChildren(children []wire.Child) {
	for _, c := range children {
		m.children.WithLabelValues(kindOf(c)).Inc()
	}
}

// kindOf is a child's kind: typed objects carry it, and so do the JSON
// maps of a last-applied answer.
func kindOf(c wire.Child) string {
	switch o := c.(type) {
	case interface{ GetObjectKind() schema.ObjectKind }:
		return o.GetObjectKind().GroupVersionKind().Kind
	case map[string]any:
		if kind, _ := o["kind"].(string); kind != "" {
			return kind
		}
	}
	return "unknown"
}
