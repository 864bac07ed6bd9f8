package metrics

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// TemporalHandler returns a Temporal client.MetricsHandler that records the
// SDK's metrics (and what workflow and activity code records through
// workflow.GetMetricsHandler / activity.GetMetricsHandler, which the SDK
// keeps replay-safe) on this registry. Counters get a "_total" suffix and
// timers become histograms in seconds. A metric keeps the label names of
// its first use; later uses with other tags are projected onto them.
func (m *Metrics) TemporalHandler() client.MetricsHandler {
	if m == nil {
		return client.MetricsNopHandler
	}
	return &temporalHandler{reg: &temporalRegistry{r: m.Registry, vecs: map[string]any{}, labels: map[string][]string{}}}
}

type temporalRegistry struct {
	r      *prometheus.Registry
	mu     sync.Mutex
	vecs   map[string]any
	labels map[string][]string
}

type temporalHandler struct {
	reg  *temporalRegistry
	tags map[string]string
}

func (h *temporalHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(h.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	return &temporalHandler{reg: h.reg, tags: merged}
}

func (h *temporalHandler) Counter(name string) client.MetricsCounter {
	v, labels := h.reg.vec(metricName(name)+"_total", h.tags, func(n string, l []string) prometheus.Collector {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: n, Help: "Temporal SDK counter " + name + "."}, l)
	})
	if v == nil {
		return client.MetricsNopHandler.Counter(name)
	}
	c := v.(*prometheus.CounterVec).WithLabelValues(values(labels, h.tags)...)
	return counterFunc(func(d int64) { c.Add(float64(d)) })
}

func (h *temporalHandler) Gauge(name string) client.MetricsGauge {
	v, labels := h.reg.vec(metricName(name), h.tags, func(n string, l []string) prometheus.Collector {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: n, Help: "Temporal SDK gauge " + name + "."}, l)
	})
	if v == nil {
		return client.MetricsNopHandler.Gauge(name)
	}
	g := v.(*prometheus.GaugeVec).WithLabelValues(values(labels, h.tags)...)
	return gaugeFunc(g.Set)
}

func (h *temporalHandler) Timer(name string) client.MetricsTimer {
	v, labels := h.reg.vec(metricName(name)+"_seconds", h.tags, func(n string, l []string) prometheus.Collector {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: n, Help: "Temporal SDK timer " + name + ".",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 60}}, l)
	})
	if v == nil {
		return client.MetricsNopHandler.Timer(name)
	}
	o := v.(*prometheus.HistogramVec).WithLabelValues(values(labels, h.tags)...)
	return timerFunc(func(d time.Duration) { o.Observe(d.Seconds()) })
}

// vec returns the collector of name, creating and registering it with the
// sorted tag keys as label names on first use; nil when registration fails
// (a name clash with another collector), so the metric is dropped.
func (r *temporalRegistry) vec(name string, tags map[string]string, mk func(string, []string) prometheus.Collector) (any, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.vecs[name]; ok {
		return v, r.labels[name]
	}
	labels := make([]string, 0, len(tags))
	for k := range tags {
		labels = append(labels, metricName(k))
	}
	slices.Sort(labels)
	labels = slices.Compact(labels)
	c := mk(name, labels)
	if err := r.r.Register(c); err != nil {
		r.vecs[name] = nil
		return nil, nil
	}
	r.vecs[name], r.labels[name] = c, labels
	return c, labels
}

func values(labels []string, tags map[string]string) []string {
	byName := make(map[string]string, len(tags))
	for k, v := range tags {
		byName[metricName(k)] = v
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = byName[l]
	}
	return out
}

// metricName keeps [a-zA-Z0-9_] and replaces the rest with '_'.
func metricName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }
