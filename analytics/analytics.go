// Package analytics builds the operators' report (GET
// /api/v1/tools/admin/analytics): tool usage and success rates, the
// queries tools served most, fulfilment branches, the novel verbs nothing
// fulfilled, and tools per group. It reads the graph store and a list of
// recent novel-verb runs (from Temporal's visibility); it writes nothing.
package analytics

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
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
	// StaleAfter is how long an active tool may go unused (or, never used,
	// unchanged) before it is stale (default 30 days).
	StaleAfter time.Duration
	// TrendWindow is the recent window of trending queries (default 24h).
	TrendWindow time.Duration
	// Now is the report's time (default time.Now).
	Now func() time.Time
	// MaxQueries bounds how many served queries are read (default 5000).
	MaxQueries int
	// Caller, when set, is who reads the report: its lists (and the figures
	// summed from them) then count only the tools the caller may execute,
	// and the queries some such tool served (an owner sees every tool).
	// Unset, the report covers every tool, as the scheduled analytics and
	// the ranking need; Report.For trims such a report for a reader.
	Caller *access.Caller
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
	// StaleTools are active tools unused for StaleAfter, the longest idle
	// first (at most Top); StaleCount counts them all.
	StaleTools []StaleTool `json:"staleTools"`
	StaleCount int         `json:"staleCount"`
	// Trending are the queries served more often in the last TrendWindow
	// than before it, the most risen first (at most Top).
	Trending []Trend `json:"trending"`
	// Gaps counts the capability gaps by status.
	Gaps map[string]int `json:"gaps,omitempty"`
	// Ranking is what the scheduled analytics give the ranking.
	Ranking RankingPriors `json:"-"`
	// RunsAvailable is false when no run listing is configured (the report
	// then has no fulfilment figures); RunsError says why a listing failed.
	RunsAvailable bool   `json:"runsAvailable"`
	RunsError     string `json:"runsError,omitempty"`
	// QueryTools names, for a report made for no caller, the tools that
	// served each query of TopQueries and Trending, so Report.For can keep
	// only the queries a tool the reader may execute served. A report made
	// for a caller, or trimmed for one, has none.
	QueryTools map[string][]string `json:"queryTools,omitempty"`
}

// StaleTool is an active tool nobody has used for a while.
type StaleTool struct {
	ToolID string `json:"toolId"`
	// Since is the last use, or the last change for a tool never used.
	Since    time.Time `json:"since"`
	IdleDays int       `json:"idleDays"`
	Uses     int       `json:"uses"`
}

// Trend is a query served more often lately.
type Trend struct {
	Query string `json:"query"`
	// Recent counts it in the trend window, Before in the rest of the read
	// history; Rise is Recent minus Before scaled to the window's length.
	Recent int     `json:"recent"`
	Before int     `json:"before"`
	Rise   float64 `json:"rise"`
}

// RankingPriors are the scheduled analytics' input to ranking: each used
// tool's popularity in [0, 1] (log-scaled uses over the most used tool's)
// and the stale tools.
type RankingPriors struct {
	Popularity map[string]float64 `json:"popularity"`
	Stale      []string           `json:"stale"`
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

// SinceSkew is how far past the server's clock a window's start (a
// report's or a series' since) may be: clocks differ by a little.
const SinceSkew = time.Minute

// CheckSince refuses a window's start later than now plus SinceSkew, a
// ValidationError on "since": a window that starts in the future holds
// nothing, and answering its empty report would read as "nothing
// happened" rather than "that time has not come".
func CheckSince(since, now time.Time) error {
	if since.After(now.Add(SinceSkew)) {
		return fault.Malformed("since", "must not be in the future (the server's clock reads %s), got %s",
			now.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
	}
	return nil
}

// Build reads the store (and runs, when non-nil) and returns the report.
// A Since in the future is refused (CheckSince).
func Build(ctx context.Context, store graph.Store, runs RunLister, o Options) (Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	now := o.Now().UTC()
	if err := CheckSince(o.Since, now); err != nil {
		return Report{}, err
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 30 * 24 * time.Hour
	}
	if o.TrendWindow <= 0 {
		o.TrendWindow = 24 * time.Hour
	}
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
		StaleTools: []StaleTool{}, Trending: []Trend{}, Ranking: RankingPriors{Popularity: map[string]float64{}, Stale: []string{}},
		Fulfilments: Fulfilments{ByBranch: map[string]int{}, ByStatus: map[string]int{}}}

	var ids []string
	changed := map[string]time.Time{} // active tools' last change
	after := ""
	filter := graph.Filter{Statuses: []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled}}
	if o.Caller != nil && !o.Caller.SeesEveryTool() {
		// A reader's report counts only the tools it may execute.
		filter.Allow = o.Caller.Allows
	}
	for {
		page, err := store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000, Filter: filter})
		if err != nil {
			return Report{}, fmt.Errorf("analytics: list tools: %w", err)
		}
		for _, t := range page.Items {
			r.Tools[t.Status]++
			ids = append(ids, t.ID)
			if t.Status != graph.StatusActive {
				continue
			}
			changed[t.ID] = t.UpdatedAt
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
	lastUse := map[string]graph.Usage{}
	for start := 0; start < len(ids); start += 1000 {
		u, err := store.Usage(ctx, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return Report{}, fmt.Errorf("analytics: usage: %w", err)
		}
		for _, x := range u {
			lastUse[x.ToolID] = x
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

	// Popularity for ranking: log-scaled uses over the most used tool's.
	maxUses := 0
	for _, u := range used {
		maxUses = max(maxUses, u.Uses)
	}
	for _, u := range used {
		r.Ranking.Popularity[u.ToolID] = math.Log1p(float64(u.Uses)) / math.Log1p(float64(maxUses))
	}
	// Stale: active tools idle (or, never used, unchanged) for StaleAfter.
	var stale []StaleTool
	for id, ch := range changed {
		since, uses := ch, 0
		if u, ok := lastUse[id]; ok {
			uses = u.Uses
			if !u.LastUsed.IsZero() {
				since = u.LastUsed
			}
		}
		if since.IsZero() || now.Sub(since) < o.StaleAfter {
			continue
		}
		stale = append(stale, StaleTool{ToolID: id, Since: since.UTC(), IdleDays: int(now.Sub(since).Hours() / 24), Uses: uses})
	}
	sort.Slice(stale, func(i, j int) bool {
		if !stale[i].Since.Equal(stale[j].Since) {
			return stale[i].Since.Before(stale[j].Since)
		}
		return stale[i].ToolID < stale[j].ToolID
	})
	r.StaleCount = len(stale)
	for _, st := range stale {
		r.Ranking.Stale = append(r.Ranking.Stale, st.ToolID)
	}
	r.StaleTools = append(r.StaleTools, stale[:min(o.Top, len(stale))]...)

	served, err := store.ServedQueries(ctx, o.MaxQueries)
	if err != nil {
		return Report{}, fmt.Errorf("analytics: served queries: %w", err)
	}
	queries := map[string]int{}
	recent, before := map[string]int{}, map[string]int{}
	oldest := now
	listed := make(map[string]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	servedBy := map[string]map[string]bool{}
	for _, q := range served {
		k := strings.ToLower(strings.Join(strings.Fields(q.Query), " "))
		if k == "" {
			continue
		}
		if o.Caller != nil && !o.Caller.SeesEveryTool() && !listed[q.ToolID] {
			continue // served by a tool this reader may not execute
		}
		if servedBy[k] == nil {
			servedBy[k] = map[string]bool{}
		}
		servedBy[k][q.ToolID] = true
		queries[k]++
		if !q.At.IsZero() && q.At.Before(oldest) {
			oldest = q.At
		}
		if now.Sub(q.At) <= o.TrendWindow {
			recent[k]++
		} else {
			before[k]++
		}
	}
	r.TopQueries = top(queries, o.Top)
	// Trending: the rise over what the window would hold at the earlier rate.
	span := now.Sub(oldest) - o.TrendWindow
	for k, n := range recent {
		expected := 0.0
		if span > 0 {
			expected = float64(before[k]) * float64(o.TrendWindow) / float64(span)
		}
		if rise := float64(n) - expected; n >= 2 && rise > 0 {
			r.Trending = append(r.Trending, Trend{Query: k, Recent: n, Before: before[k], Rise: math.Round(rise*100) / 100})
		}
	}
	sort.Slice(r.Trending, func(i, j int) bool {
		if r.Trending[i].Rise != r.Trending[j].Rise {
			return r.Trending[i].Rise > r.Trending[j].Rise
		}
		return r.Trending[i].Query < r.Trending[j].Query
	})
	r.Trending = r.Trending[:min(o.Top, len(r.Trending))]
	if o.Caller == nil {
		r.QueryTools = map[string][]string{}
		for _, q := range r.TopQueries {
			r.QueryTools[q.Key] = slices.Sorted(maps.Keys(servedBy[q.Key]))
		}
		for _, q := range r.Trending {
			r.QueryTools[q.Query] = slices.Sorted(maps.Keys(servedBy[q.Query]))
		}
	}

	r.Gaps = map[string]int{graph.GapOpen: 0, graph.GapClosed: 0}
	gaps, err := store.ListGaps(ctx, graph.GapQuery{Limit: 100000})
	if err != nil {
		return Report{}, fmt.Errorf("analytics: gaps: %w", err)
	}
	for _, g := range gaps {
		r.Gaps[g.Status]++
	}

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

// For trims a report made for no caller (the scheduled analytics') to
// what caller may see: the tools of MostUsed, LowestSuccess and StaleTools
// it may execute, and the queries of TopQueries and Trending that such a
// tool served. An owner sees every tool. The figures summed over every
// tool (usage totals, counts by status and group) stay as they were made.
func (r Report) For(ctx context.Context, g access.ToolGetter, caller access.Caller) (Report, error) {
	qt := r.QueryTools
	r.QueryTools = nil
	if caller.SeesEveryTool() {
		return r, nil
	}
	var ids []string
	for _, u := range slices.Concat(r.MostUsed, r.LowestSuccess) {
		ids = append(ids, u.ToolID)
	}
	for _, st := range r.StaleTools {
		ids = append(ids, st.ToolID)
	}
	for _, tools := range qt {
		ids = append(ids, tools...)
	}
	hidden, err := access.HiddenIDs(ctx, g, ids, caller)
	if err != nil {
		return Report{}, fmt.Errorf("analytics: trim for the reader: %w", err)
	}
	gone := func(id string) bool { return id == "" || hidden[id] }
	unserved := func(q string) bool { return !slices.ContainsFunc(qt[q], func(id string) bool { return !gone(id) }) }
	// Clones: the stored report's lists stay whole for the next reader.
	r.MostUsed = slices.DeleteFunc(slices.Clone(r.MostUsed), func(u ToolUsage) bool { return gone(u.ToolID) })
	r.LowestSuccess = slices.DeleteFunc(slices.Clone(r.LowestSuccess), func(u ToolUsage) bool { return gone(u.ToolID) })
	r.StaleTools = slices.DeleteFunc(slices.Clone(r.StaleTools), func(st StaleTool) bool { return gone(st.ToolID) })
	r.StaleCount = len(r.StaleTools)
	r.TopQueries = slices.DeleteFunc(slices.Clone(r.TopQueries), func(q Count) bool { return unserved(q.Key) })
	r.Trending = slices.DeleteFunc(slices.Clone(r.Trending), func(q Trend) bool { return unserved(q.Query) })
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

// Snapshot names of the scheduled analytics (retrieval.RankingSnapshot is
// SnapshotRanking: ranking reads the priors from it).
const (
	SnapshotReport  = "analytics"
	SnapshotRanking = "ranking"
)

// Publish stores a report and its ranking priors as the latest snapshots:
// GET /api/v1/tools/admin/analytics?source=scheduled serves the report,
// ranking reads the priors.
func Publish(ctx context.Context, s graph.Snapshots, r Report) error {
	rep, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("analytics: publish: %w", err)
	}
	rank, err := json.Marshal(r.Ranking)
	if err != nil {
		return fmt.Errorf("analytics: publish: %w", err)
	}
	if err := s.PutSnapshot(ctx, graph.Snapshot{Name: SnapshotReport, At: r.GeneratedAt, Data: rep}); err != nil {
		return fmt.Errorf("analytics: publish report: %w", err)
	}
	if err := s.PutSnapshot(ctx, graph.Snapshot{Name: SnapshotRanking, At: r.GeneratedAt, Data: rank}); err != nil {
		return fmt.Errorf("analytics: publish ranking priors: %w", err)
	}
	return nil
}
