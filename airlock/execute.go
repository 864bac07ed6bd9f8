package airlock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Approval is an approved spec with its built wrapper.
type Approval struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	// Location is where the approved spec came from; it owns the Slug.
	Location string `json:"location,omitempty"`
	// SpecHash is the sha256 of the approved spec document.
	SpecHash string `json:"specHash,omitempty"`
	// SourceHash is the sha256 of the wrapper's generated sources
	// (SourceHash): a worker that rebuilds the wrapper must reproduce it.
	SourceHash string `json:"sourceHash,omitempty"`
	Binary     string `json:"binary"` // path of the built wrapper, on this worker's disk
	Policy     Policy `json:"policy"`
	// BaseURL is the approved server (what health checks probe).
	BaseURL string `json:"baseUrl"`
	// ToolIDs are the tools the approval registered.
	ToolIDs []string `json:"toolIds"`
}

// CallRecord is one execution of an onboarded tool, as the ledger keeps it.
type CallRecord = graph.CallRecord

// Ledger records every call of onboarded tools and answers the questions
// the policies ask, as graph.CallLedger says: the store is the ledger in
// production (so every worker and API replica counts the same calls), a
// MemoryLedger in tests. Implementations must be safe for concurrent use.
type Ledger interface {
	ReserveCall(ctx context.Context, r CallRecord, since []time.Time, check func(graph.CallTally) error) (CallRecord, graph.CallTally, error)
	CompleteCall(ctx context.Context, r CallRecord) error
}

// Notification is raised for people to see (soft budget reached, tool
// disabled by health checks, …).
type Notification struct {
	Kind    string    `json:"kind"`
	Subject string    `json:"subject"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// Notifier delivers notifications.
type Notifier interface {
	Notify(ctx context.Context, n Notification) error
}

// Executor runs built wrappers under their approval's policies.
type Executor struct {
	Ledger   Ledger
	Notifier Notifier
	// Now and Getenv are injectable for tests; defaults time.Now and os.Getenv.
	Now    func() time.Time
	Getenv func(string) string
	// Timeout bounds one call (default 30 s).
	Timeout time.Duration
}

func (e *Executor) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Execute checks access, rate limit, daily quota and hard budget, records
// the call, runs the wrapper and returns its result. Refusals are fault
// errors (ErrForbidden, ErrLimit) naming the policy; a wrapper that ran
// returns its kit.Result whether or not the API call succeeded.
func (e *Executor) Execute(ctx context.Context, a Approval, toolName string, args map[string]any, caller access.Caller) (kit.Result, error) {
	p := a.Policy
	if !p.Permits(caller) {
		return kit.Result{}, fmt.Errorf("airlock: %s.%s: the approval's allowed users/roles exclude this caller: %w", a.Slug, toolName, fault.ErrForbidden)
	}
	rec, spentBefore, err := e.reserve(ctx, a, toolName, caller)
	if err != nil {
		return kit.Result{}, err
	}
	res, runErr := e.run(ctx, a, toolName, args)
	rec.Done, rec.Success, rec.Stage, rec.LatencyMs = true, res.Success, res.Stage, res.LatencyMs
	if runErr != nil || res.Stage == kit.StageInput || res.Stage == kit.StageRequest || res.Stage == kit.StageHost {
		rec.Cost = 0 // the API was never reached: nothing to pay
	}
	if err := e.Ledger.CompleteCall(ctx, rec); err != nil {
		return res, fmt.Errorf("airlock: record call: %w", err)
	}
	if p.SoftBudget > 0 && spentBefore < p.SoftBudget && spentBefore+rec.Cost >= p.SoftBudget && e.Notifier != nil {
		_ = e.Notifier.Notify(ctx, Notification{Kind: "soft_budget", Subject: a.Slug,
			Message: fmt.Sprintf("%s has spent %.2f of its %.2f soft budget (hard budget %.2f)", a.Slug, spentBefore+rec.Cost, p.SoftBudget, p.HardBudget), At: e.now()})
	}
	if runErr != nil {
		return res, runErr
	}
	return res, nil
}

// reserve checks the counting policies and records the call in one
// ledger reservation, which excludes every other reservation of the
// approval (in any process over the store), so concurrent calls cannot
// overrun a limit together. It returns the record and what was spent
// before it.
func (e *Executor) reserve(ctx context.Context, a Approval, toolName string, caller access.Caller) (CallRecord, float64, error) {
	now := e.now()
	p := a.Policy
	// Tally only the windows a policy limits: counting a day's calls costs
	// in proportion to them.
	var since []time.Time
	rate, quota := -1, -1
	if p.RateLimitPerMinute > 0 {
		rate, since = len(since), append(since, now.Add(-time.Minute))
	}
	if p.QuotaPerDay > 0 {
		quota, since = len(since), append(since, time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC))
	}
	check := func(t graph.CallTally) error {
		if rate >= 0 && t.Calls[rate] >= p.RateLimitPerMinute {
			return fmt.Errorf("airlock: %s: rate limit of %d calls per minute reached: %w", a.Slug, p.RateLimitPerMinute, fault.ErrLimit)
		}
		if quota >= 0 && t.Calls[quota] >= p.QuotaPerDay {
			return fmt.Errorf("airlock: %s: daily quota of %d calls reached: %w", a.Slug, p.QuotaPerDay, fault.ErrLimit)
		}
		if p.HardBudget > 0 && t.Spent+p.CostPerCall > p.HardBudget+1e-9 {
			return fmt.Errorf("airlock: %s: hard budget %.2f would be exceeded (spent %.2f, call costs %.2f): %w", a.Slug, p.HardBudget, t.Spent, p.CostPerCall, fault.ErrLimit)
		}
		return nil
	}
	rec, tally, err := e.Ledger.ReserveCall(ctx, CallRecord{ApprovalID: a.ID, Tool: toolName, UserID: caller.UserID, At: now, Cost: p.CostPerCall}, since, check)
	if errors.Is(err, fault.ErrLimit) {
		return CallRecord{}, 0, err
	}
	if err != nil {
		return CallRecord{}, 0, fmt.Errorf("airlock: ledger: %w", err)
	}
	return rec, tally.Spent, nil
}

// run executes the wrapper binary: one JSON request on stdin, one JSON
// result on stdout. The child sees only PATH and the credential variable.
func (e *Executor) run(ctx context.Context, a Approval, toolName string, args map[string]any) (kit.Result, error) {
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	req := kit.Request{Tool: toolName, Arguments: args, TimeoutMs: int(timeout / time.Millisecond), Credential: a.Policy.Credential}
	in, err := json.Marshal(req)
	if err != nil {
		return kit.Result{}, fmt.Errorf("airlock: encode request: %w", err)
	}
	cmd := exec.CommandContext(ctx, a.Binary, "call")
	cmd.Env = []string{"PATH=" + getenv("PATH")}
	if c := a.Policy.Credential; c != nil {
		cmd.Env = append(cmd.Env, c.Env+"="+getenv(c.Env))
	}
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return kit.Result{Tool: toolName, Stage: kit.StageNetwork, Error: fmt.Sprintf("wrapper failed: %v: %s", err, kit.FirstLine(stderr.String()))},
			fmt.Errorf("airlock: run wrapper %s: %v: %s: %w", a.Slug, err, kit.FirstLine(stderr.String()), fault.ErrUnavailable)
	}
	var res kit.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return kit.Result{Tool: toolName, Stage: kit.StageResponse, Error: "wrapper printed no result"},
			fmt.Errorf("airlock: wrapper %s printed no JSON result: %w", a.Slug, err)
	}
	return res, nil
}

// MemoryLedger is an in-process Ledger (tests, and the check command).
type MemoryLedger struct {
	mu      sync.Mutex
	records []CallRecord
}

// ReserveCall implements Ledger.
func (m *MemoryLedger) ReserveCall(_ context.Context, r CallRecord, since []time.Time, check func(graph.CallTally) error) (CallRecord, graph.CallTally, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := graph.CallTally{Calls: make([]int, len(since))}
	for _, x := range m.records {
		if x.ApprovalID != r.ApprovalID {
			continue
		}
		t.Spent += x.Cost
		for i, s := range since {
			if !x.At.Before(s) {
				t.Calls[i]++
			}
		}
	}
	if err := check(t); err != nil {
		return r, t, err
	}
	r.ID = int64(len(m.records) + 1)
	m.records = append(m.records, r)
	return r, t, nil
}

// CompleteCall implements Ledger.
func (m *MemoryLedger) CompleteCall(_ context.Context, r CallRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.ID < 1 || int(r.ID) > len(m.records) {
		return fmt.Errorf("no call record %d: %w", r.ID, fault.ErrNotFound)
	}
	m.records[r.ID-1] = r
	return nil
}

// Records returns a copy of every record.
func (m *MemoryLedger) Records() []CallRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]CallRecord(nil), m.records...)
}
