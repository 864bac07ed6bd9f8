// Package analytics builds the operators' report (seed 01 §8,
// GET /api/v1/tools/admin/analytics): tool usage and success rates, the
// queries tools served most, fulfilment branches, the novel verbs nothing
// fulfilled, and tools per group. It reads the graph store and a list of
// recent novel-verb runs (from Temporal's visibility); it writes nothing.
package analytics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

// Run is one novel-verb fulfilment as Temporal's visibility lists it.
type Run struct {
	WorkflowID string
	RunID      string
	Verb       string
	Branch     string // substitute, decompose, find_or_build, no_capability, search (still searching)
	Status     string // running, completed, failed, …
	Start      time.Time
	Close      time.Time // zero while running
}

// RecentRun is one run as the report lists it.
type RecentRun struct {
	WorkflowID string    `json:"workflowId"`
	RunID      string    `json:"runId,omitempty"`
	Verb       string    `json:"verb"`
	Branch     string    `json:"branch"`
	Status     string    `json:"status"`
	StartedAt  time.Time `json:"startedAt"`
	ClosedAt   time.Time `json:"closedAt,omitzero"`
	// DurationMs is the run's duration, or its age while it runs.
	DurationMs int64 `json:"durationMs"`
}

// RunLister lists recent novel-verb runs started at or after since, newest
// first, at most limit.
type RunLister interface {
	NovelVerbRuns(ctx context.Context, since time.Time, limit int) ([]Run, error)
}

// Options bound the report.
type Options struct {
	// Since is the start of the window for runs (default: 7 days ago).
	Since time.Time
	// Top is how many entries the ranked lists keep (default 10, max 100).
	Top int
	// MaxRuns bounds how many runs are read (default 5000).
	MaxRuns int
	// Recent is how many of the newest runs the report lists (default 25,
	// max 500).
	Recent int
	// MaxQueries bounds how many served queries are read (default 5000).
	MaxQueries int
}

// ToolUsage is one tool's use.
type ToolUsage struct {
	ToolID      string    `json:"toolId"`
	Uses        int       `json:"uses"`
	Successes   int       `json:"successes"`
	SuccessRate float64   `json:"successRate"`
	LastUsed    time.Time `json:"lastUsed,omitzero"`
}

// Count is a label with a count.
type Count struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// Report is the analytics answer.
type Report struct {
	GeneratedAt time.Time `json:"generatedAt"`
	Since       time.Time `json:"since"`
	// Tools counts tools by status; Groups counts active tools per group.
	Tools  map[string]int `json:"tools"`
	Groups map[string]int `json:"groups"`
	// Usage sums every recorded use; MostUsed and LowestSuccess rank tools
	// (LowestSuccess only among tools used at least 5 times).
	Usage         UsageTotals `json:"usage"`
	MostUsed      []ToolUsage `json:"mostUsed"`
	LowestSuccess []ToolUsage `json:"lowestSuccess"`
	// TopQueries are the query texts tools served most often (normalised:
	// trimmed and lower-cased), from the latest MaxQueries served queries.
	TopQueries []Count `json:"topQueries"`
	// Fulfilments counts novel-verb runs in the window by branch and by status.
	Fulfilments Fulfilments `json:"fulfilments"`
	// Unfulfilled are the verbs whose runs ended with no capability or
	// failed, most frequent first.
	Unfulfilled []Count `json:"unfulfilled"`
	// RecentRuns are the newest runs in the window (at most Recent).
	RecentRuns []RecentRun `json:"recentRuns"`
	// RunsAvailable is false when no run listing is configured (the report
	// then has no fulfilment figures); RunsError says why a listing failed.
	RunsAvailable bool   `json:"runsAvailable"`
	RunsError     string `json:"runsError,omitempty"`
}

// UsageTotals sums usage over every tool.
type UsageTotals struct {
	Uses        int     `json:"uses"`
	Successes   int     `json:"successes"`
	SuccessRate float64 `json:"successRate"`
	ToolsUsed   int     `json:"toolsUsed"`
}

// Fulfilments counts runs.
type Fulfilments struct {
	Total    int            `json:"total"`
	ByBranch map[string]int `json:"byBranch"`
	ByStatus map[string]int `json:"byStatus"`
}

// Build reads the store (and runs, when non-nil) and returns the report.
func Build(ctx context.Context, store graph.Store, runs RunLister, o Options) (Report, error) {
	now := time.Now().UTC()
	if o.Since.IsZero() {
		o.Since = now.Add(-7 * 24 * time.Hour)
	}
	if o.Top <= 0 {
		o.Top = 10
	}
	o.Top = min(o.Top, 100)
	if o.MaxRuns <= 0 {
		o.MaxRuns = 5000
	}
	if o.MaxQueries <= 0 {
		o.MaxQueries = 5000
	}
	if o.Recent <= 0 {
		o.Recent = 25
	}
	o.Recent = min(o.Recent, 500)
	r := Report{GeneratedAt: now, Since: o.Since.UTC(), Tools: map[string]int{}, Groups: map[string]int{},
		MostUsed: []ToolUsage{}, LowestSuccess: []ToolUsage{}, TopQueries: []Count{}, Unfulfilled: []Count{}, RecentRuns: []RecentRun{},
		Fulfilments: Fulfilments{ByBranch: map[string]int{}, ByStatus: map[string]int{}}}

	var ids []string
	after := ""
	for {
		page, err := store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000,
			Filter: graph.Filter{Statuses: []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled}}})
		if err != nil {
			return Report{}, fmt.Errorf("analytics: list tools: %w", err)
		}
		for _, t := range page.Items {
			r.Tools[t.Status]++
			ids = append(ids, t.ID)
			if t.Status != graph.StatusActive {
				continue
			}
			groups := t.Groups
			if len(groups) == 0 {
				groups = []string{"default"}
			}
			for _, g := range groups {
				r.Groups[g]++
			}
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}

	var used []ToolUsage
	for start := 0; start < len(ids); start += 1000 {
		u, err := store.Usage(ctx, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return Report{}, fmt.Errorf("analytics: usage: %w", err)
		}
		for _, x := range u {
			if x.Uses == 0 {
				continue
			}
			tu := ToolUsage{ToolID: x.ToolID, Uses: x.Uses, Successes: x.Successes, SuccessRate: float64(x.Successes) / float64(x.Uses), LastUsed: x.LastUsed}
			used = append(used, tu)
			r.Usage.Uses += x.Uses
			r.Usage.Successes += x.Successes
		}
	}
	r.Usage.ToolsUsed = len(used)
	if r.Usage.Uses > 0 {
		r.Usage.SuccessRate = float64(r.Usage.Successes) / float64(r.Usage.Uses)
	}
	sort.Slice(used, func(i, j int) bool {
		if used[i].Uses != used[j].Uses {
			return used[i].Uses > used[j].Uses
		}
		return used[i].ToolID < used[j].ToolID
	})
	r.MostUsed = append(r.MostUsed, used[:min(o.Top, len(used))]...)
	var rated []ToolUsage
	for _, u := range used {
		if u.Uses >= 5 {
			rated = append(rated, u)
		}
	}
	sort.SliceStable(rated, func(i, j int) bool { return rated[i].SuccessRate < rated[j].SuccessRate })
	r.LowestSuccess = append(r.LowestSuccess, rated[:min(o.Top, len(rated))]...)

	served, err := store.ServedQueries(ctx, o.MaxQueries)
	if err != nil {
		return Report{}, fmt.Errorf("analytics: served queries: %w", err)
	}
	queries := map[string]int{}
	for _, q := range served {
		if k := strings.ToLower(strings.Join(strings.Fields(q.Query), " ")); k != "" {
			queries[k]++
		}
	}
	r.TopQueries = top(queries, o.Top)

	if runs != nil {
		r.RunsAvailable = true
		list, err := runs.NovelVerbRuns(ctx, o.Since, o.MaxRuns)
		if err != nil {
			r.RunsError = err.Error()
		}
		unfulfilled := map[string]int{}
		for _, run := range list {
			if len(r.RecentRuns) < o.Recent {
				end := run.Close
				if end.IsZero() {
					end = now
				}
				r.RecentRuns = append(r.RecentRuns, RecentRun{WorkflowID: run.WorkflowID, RunID: run.RunID, Verb: run.Verb,
					Branch: run.Branch, Status: run.Status, StartedAt: run.Start.UTC(), ClosedAt: run.Close.UTC(),
					DurationMs: max(0, end.Sub(run.Start).Milliseconds())})
			}
			r.Fulfilments.Total++
			r.Fulfilments.ByBranch[run.Branch]++
			r.Fulfilments.ByStatus[run.Status]++
			if run.Branch == "no_capability" || run.Status == "failed" {
				unfulfilled[run.Verb]++
			}
		}
		r.Unfulfilled = top(unfulfilled, o.Top)
	}
	return r, nil
}

// top returns the n largest counts, ties by key.
func top(m map[string]int, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{Key: k, Count: v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	return out[:min(n, len(out))]
}
