package hook

import (
	"encoding/json"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// metrics has no per-Monocle series: each replica sees only some syncs and
// is never told that a Monocle is gone. Per-Monocle readiness is read from
// the Monocles' status conditions instead.
type metrics struct {
	requests *prometheus.CounterVec
	duration prometheus.Histogram
	errors   *prometheus.CounterVec
	children *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, version string) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monocle_hook_sync_requests_total",
			Help: "Sync requests answered, by result (ok or error).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "monocle_hook_sync_duration_seconds",
			Help:    "Time to decode, compute and encode one sync, in seconds.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monocle_hook_sync_errors_total",
			Help: "Syncs that failed or could not be honoured, by reason: malformed, too_large, internal, panic, invalid_spec.",
		}, []string{"reason"}),
		children: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monocle_hook_desired_children_total",
			Help: "Children answered in successful syncs, by kind.",
		}, []string{"kind"}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "monocle_hook_build_info",
		Help:        "Always 1; its labels name the build.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	build.Set(1)
	for _, reason := range []string{"malformed", "too_large", "internal", "panic", "invalid_spec"} {
		m.errors.WithLabelValues(reason)
	}
	for _, result := range []string{"ok", "error"} {
		m.requests.WithLabelValues(result)
	}
	reg.MustRegister(m.requests, m.duration, m.errors, m.children, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(result string, d time.Duration) {
	m.requests.WithLabelValues(result).Inc()
	m.duration.Observe(d.Seconds())
}

func (m *metrics) countChildren(children []Child) {
	for _, c := range children {
		m.children.WithLabelValues(kindOf(c)).Inc()
	}
}

// kindOf is a child's kind: typed objects carry it, and the raw objects of
// a last-applied answer are read for it.
func kindOf(c Child) string {
	switch o := c.(type) {
	case interface{ GetObjectKind() schema.ObjectKind }:
		return o.GetObjectKind().GroupVersionKind().Kind
	case json.RawMessage:
		var t metav1.TypeMeta
		if json.Unmarshal(o, &t) == nil && t.Kind != "" {
			return t.Kind
		}
	}
	return "unknown"
}
