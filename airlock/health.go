package airlock

import (
	"context"
	"net/http"
	"time"
)

// Probe is one health check of an onboarded API.
type Probe struct {
	OK        bool      `json:"ok"`
	Status    int       `json:"status,omitempty"`
	LatencyMs int64     `json:"latencyMs"`
	Error     string    `json:"error,omitempty"`
	At        time.Time `json:"at"`
}

// Prober checks that an API answers, without side effects: a HEAD request
// (GET when HEAD is refused) to the approved base URL, whose answer must not
// be a server error. Any other status, 404 included, proves the API is up.
type Prober struct {
	Client  *http.Client
	Timeout time.Duration // default 10 s
	Now     func() time.Time
}

// Probe checks one base URL.
func (p *Prober) Probe(ctx context.Context, baseURL string) Probe {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	client := p.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	start := now()
	res := Probe{At: start}
	status, err := p.do(ctx, client, http.MethodHead, baseURL, timeout)
	if err == nil && (status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented) {
		status, err = p.do(ctx, client, http.MethodGet, baseURL, timeout)
	}
	res.LatencyMs = now().Sub(start).Milliseconds()
	switch {
	case err != nil:
		res.Error = err.Error()
	case status >= 500:
		res.Status, res.Error = status, http.StatusText(status)
	default:
		res.Status, res.OK = status, true
	}
	return res
}

func (p *Prober) do(ctx context.Context, c *http.Client, method, u string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", "toolsmith-health/1")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Health is the health record an onboarded tool keeps.
type Health struct {
	Probes        int       `json:"probes"`
	Failures      int       `json:"failures"`
	Consecutive   int       `json:"consecutiveFailures"`
	LastLatencyMs int64     `json:"lastLatencyMs"`
	AvgLatencyMs  float64   `json:"avgLatencyMs"`
	LastError     string    `json:"lastError,omitempty"`
	LastProbe     time.Time `json:"lastProbe"`
}

// ErrorRate is the share of failed probes.
func (h Health) ErrorRate() float64 {
	if h.Probes == 0 {
		return 0
	}
	return float64(h.Failures) / float64(h.Probes)
}

// Record folds a probe into the health record and reports whether the tool
// has now failed threshold consecutive probes and must be disabled.
func (h Health) Record(p Probe, threshold int) (Health, bool) {
	h.Probes++
	h.LastProbe = p.At
	h.LastLatencyMs = p.LatencyMs
	h.AvgLatencyMs += (float64(p.LatencyMs) - h.AvgLatencyMs) / float64(h.Probes)
	if p.OK {
		h.Consecutive, h.LastError = 0, ""
		return h, false
	}
	h.Failures++
	h.Consecutive++
	h.LastError = p.Error
	return h, threshold > 0 && h.Consecutive == threshold
}
