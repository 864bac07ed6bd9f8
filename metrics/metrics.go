package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics is the process's collectors on their own registry. A nil
// *Metrics records nothing, so every recording method is safe to call on
// one that was never built (tests, tools).
type Metrics struct {
	Registry *prometheus.Registry

	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
	searchDuration  *prometheus.HistogramVec
	searchCache     *prometheus.CounterVec
	embedDuration   prometheus.Histogram
	groupRequests   *prometheus.CounterVec
	groupDenied     prometheus.Counter
	authFailures    *prometheus.CounterVec
	rateLimited     *prometheus.CounterVec
	mcpOnce         sync.Once
	mcpCalls        *prometheus.CounterVec
	mcpDuration     *prometheus.HistogramVec
	groupLabelsMu   sync.Mutex
	groupLabels     map[string]struct{}
	groupAvailMu    sync.Mutex
	groupAvailCache map[string]int
	groupAvailAt    time.Time
}

// New builds the collectors and registers them with Go runtime and process
// collectors on a fresh registry.
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolsmith_http_requests_total", Help: "HTTP requests by method, route template and status code.",
		}, []string{"method", "route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolsmith_http_request_duration_seconds", Help: "HTTP request duration by method and route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route"}),
		searchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolsmith_search_duration_seconds", Help: "Tool search latency by strategy (cache hits included).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .02, .04, .08, .16, .32, .64, 1.28},
		}, []string{"strategy"}),
		searchCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolsmith_search_cache_total", Help: "Search result cache look-ups by result (hit or miss).",
		}, []string{"result"}),
		embedDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "toolsmith_embedding_duration_seconds", Help: "Time to embed one query or a batch of tool texts.",
			Buckets: []float64{.001, .0025, .005, .01, .02, .04, .08, .16, .32, .64, 1.28, 2.56},
		}),
		groupRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agent_tool_group_requests_total", Help: "Requests by tool group asked for.",
		}, []string{"group"}),
		groupDenied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agent_group_access_denied_total", Help: "Requests refused for asking for groups outside the credential's.",
		}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolsmith_auth_failures_total", Help: "Requests refused by authentication (401) or authorization (403), by kind.",
		}, []string{"kind"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolsmith_rate_limited_total", Help: "Requests refused with 429 by limit class.",
		}, []string{"class"}),
	}
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.searchDuration, m.searchCache, m.embedDuration,
		m.groupRequests, m.groupDenied, m.authFailures, m.rateLimited)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// HTTPRequest records one served request.
func (m *Metrics) HTTPRequest(method, route string, code int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	if !httpMethods[method] {
		method = OtherLabel
	}
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(code)).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(d.Seconds())
}

// Search records one search: its strategy, latency and whether the result
// cache answered it.
func (m *Metrics) Search(strategy string, d time.Duration, cacheHit bool) {
	if m == nil {
		return
	}
	m.searchDuration.WithLabelValues(strategy).Observe(d.Seconds())
	res := "miss"
	if cacheHit {
		res = "hit"
	}
	m.searchCache.WithLabelValues(res).Inc()
}

// Embedding records one embedding call.
func (m *Metrics) Embedding(d time.Duration) {
	if m == nil {
		return
	}
	m.embedDuration.Observe(d.Seconds())
}

// MaxGroupLabels bounds the distinct group label values: groups are named
// by callers (a wildcard key may ask for any), so past this many the rest
// are counted as OtherLabel.
const MaxGroupLabels = 100

// OtherLabel is the label value for anything outside a label's bounded set.
const OtherLabel = "other"

// groupLabel returns g when it is valid text and already a label value or
// the set still has room, else OtherLabel.
func (m *Metrics) groupLabel(g string) string {
	if !utf8.ValidString(g) || g == "" {
		return OtherLabel
	}
	m.groupLabelsMu.Lock()
	defer m.groupLabelsMu.Unlock()
	if _, ok := m.groupLabels[g]; ok {
		return g
	}
	if len(m.groupLabels) >= MaxGroupLabels {
		return OtherLabel
	}
	if m.groupLabels == nil {
		m.groupLabels = map[string]struct{}{}
	}
	m.groupLabels[g] = struct{}{}
	return g
}

// httpMethods are the method label values; any other method is OtherLabel.
var httpMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// GroupRequest counts a request for the given groups (the effective ones).
func (m *Metrics) GroupRequest(groups []string) {
	if m == nil {
		return
	}
	for _, g := range groups {
		m.groupRequests.WithLabelValues(m.groupLabel(g)).Inc()
	}
}

// GroupDenied counts a request refused for its groups.
func (m *Metrics) GroupDenied() {
	if m == nil {
		return
	}
	m.groupDenied.Inc()
}

// AuthFailure counts a refused request: kind is unauthenticated or forbidden.
func (m *Metrics) AuthFailure(kind string) {
	if m == nil {
		return
	}
	m.authFailures.WithLabelValues(kind).Inc()
}

// RateLimited counts a 429 in a limit class.
func (m *Metrics) RateLimited(class string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(class).Inc()
}

// GroupCounter counts active tools per group; see WatchGroups.
type GroupCounter func(ctx context.Context) (map[string]int, error)

// WatchGroups registers agent_tool_group_availability, a gauge of the
// active tools in each group, read through count at most every interval
// (the count is cached between scrapes so a scraper cannot load the store).
func (m *Metrics) WatchGroups(count GroupCounter, interval time.Duration) {
	if m == nil || count == nil {
		return
	}
	m.Registry.MustRegister(&groupCollector{m: m, count: count, interval: interval,
		desc: prometheus.NewDesc("agent_tool_group_availability", "Active tools available per group.", []string{"group"}, nil)})
}

type groupCollector struct {
	m        *Metrics
	count    GroupCounter
	interval time.Duration
	desc     *prometheus.Desc
}

func (g *groupCollector) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *groupCollector) Collect(ch chan<- prometheus.Metric) {
	m := g.m
	m.groupAvailMu.Lock()
	if m.groupAvailCache == nil || time.Since(m.groupAvailAt) >= g.interval {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		counts, err := g.count(ctx)
		cancel()
		if err == nil {
			m.groupAvailCache, m.groupAvailAt = counts, time.Now()
		}
	}
	counts := m.groupAvailCache
	m.groupAvailMu.Unlock()
	for group, n := range counts {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(n), group)
	}
}

// WatchTrims registers toolsmith_memory_trims_total, the number of times
// the server handed freed heap pages back to the OS (internal/memtrim),
// read through runs at each scrape.
func (m *Metrics) WatchTrims(runs func() int) {
	if m == nil || runs == nil {
		return
	}
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "toolsmith_memory_trims_total", Help: "Times freed heap pages were handed back to the OS after a burst of work.",
	}, func() float64 { return float64(runs()) }))
}

// MCPCall records one MCP tool call: its tool, outcome (success, failed,
// denied) and duration.
func (m *Metrics) MCPCall(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.mcpOnce.Do(func() {
		m.mcpCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolsmith_mcp_calls_total", Help: "MCP tool calls by tool and outcome (success, failed, denied).",
		}, []string{"tool", "outcome"})
		m.mcpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolsmith_mcp_call_duration_seconds", Help: "MCP tool call duration by tool.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 120},
		}, []string{"tool"})
		m.Registry.MustRegister(m.mcpCalls, m.mcpDuration)
	})
	m.mcpCalls.WithLabelValues(tool, outcome).Inc()
	m.mcpDuration.WithLabelValues(tool).Observe(d.Seconds())
}

// SearchCacheCounts returns the search result cache's hits and misses so
// far in this process.
func (m *Metrics) SearchCacheCounts() (hits, misses float64) {
	if m == nil {
		return 0, 0
	}
	read := func(label string) float64 {
		var d dto.Metric
		if err := m.searchCache.WithLabelValues(label).Write(&d); err != nil {
			return 0
		}
		return d.GetCounter().GetValue()
	}
	return read("hit"), read("miss")
}
