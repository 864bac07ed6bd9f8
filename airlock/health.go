package airlock

import (
	"context"
	"fmt"
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

// ToolStatusSetter changes a tool's status; graph.Store satisfies it.
type ToolStatusSetter interface {
	SetStatus(ctx context.Context, id, status, reason string) error
}

// HealthChecker probes every onboarded API and disables its tools after
// Threshold consecutive failures, raising a notification.
// Re-enabling is an explicit action (Enable).
type HealthChecker struct {
	Files     *Files
	Prober    *Prober
	Tools     ToolStatusSetter
	Notifier  Notifier
	Threshold int // default 3
}

// HealthReport is one round of checks.
type HealthReport struct {
	Checked  int      `json:"checked"`
	Failing  []string `json:"failing,omitempty"`
	Disabled []string `json:"disabled,omitempty"`
}

// CheckAll probes every approval once.
func (h *HealthChecker) CheckAll(ctx context.Context) (HealthReport, error) {
	var rep HealthReport
	approvals, err := h.Files.CurrentApprovals(ctx)
	if err != nil {
		return rep, err
	}
	threshold := h.Threshold
	if threshold <= 0 {
		threshold = 3
	}
	for _, a := range approvals {
		if a.BaseURL == "" {
			continue
		}
		rec, err := h.Files.Health(ctx, a.Slug)
		if err != nil {
			return rep, err
		}
		p := h.Prober.Probe(ctx, a.BaseURL)
		rec, disable := rec.Record(p, threshold)
		if err := h.Files.SaveHealth(ctx, a.Slug, rec); err != nil {
			return rep, err
		}
		rep.Checked++
		if !p.OK {
			rep.Failing = append(rep.Failing, a.Slug)
		}
		if !disable {
			continue
		}
		for _, id := range a.ToolIDs {
			reason := fmt.Sprintf("health check: %d consecutive failures (%s)", rec.Consecutive, rec.LastError)
			if err := h.Tools.SetStatus(ctx, id, "disabled", reason); err != nil {
				return rep, fmt.Errorf("airlock: disable %s: %w", id, err)
			}
		}
		rep.Disabled = append(rep.Disabled, a.Slug)
		if h.Notifier != nil {
			_ = h.Notifier.Notify(ctx, Notification{Kind: "disabled", Subject: a.Slug, At: p.At,
				Message: fmt.Sprintf("%s failed %d health checks in a row (%s); its tools %v are disabled until re-enabled", a.Slug, rec.Consecutive, rec.LastError, a.ToolIDs)})
		}
	}
	return rep, nil
}

// Enable re-activates the tools of an approval and resets its health.
func (h *HealthChecker) Enable(ctx context.Context, slug, reason string) ([]string, error) {
	a, err := h.Files.CurrentApproval(ctx, slug)
	if err != nil {
		return nil, err
	}
	for _, id := range a.ToolIDs {
		if err := h.Tools.SetStatus(ctx, id, "active", reason); err != nil {
			return nil, fmt.Errorf("airlock: enable %s: %w", id, err)
		}
	}
	rec, err := h.Files.Health(ctx, slug)
	if err != nil {
		return nil, err
	}
	rec.Consecutive, rec.LastError = 0, ""
	return a.ToolIDs, h.Files.SaveHealth(ctx, slug, rec)
}
