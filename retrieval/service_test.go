package retrieval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

var emb = retrievaltest.Words{Dim: 256}

func newService(t *testing.T, opts retrieval.Options, ms ...tool.Manifest) (*retrieval.Service, graph.Store) {
	t.Helper()
	st := retrievaltest.Store(t, emb)
	retrievaltest.Register(t, st, emb, ms...)
	return retrieval.New(st, emb, opts), st
}

func ids(hits []retrieval.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Tool.ID
	}
	return out
}

func TestDisambiguationByContext(t *testing.T) {
	svc, _ := newService(t, retrieval.Options{}, retrievaltest.Reservation()...)
	tests := []struct {
		context, want, entity string
	}{
		{"Southwest flight 175 to Denver", "airline.book_seat", "southwest"},
		{"dinner for two at 8pm", "restaurant.reserve_table", "restaurant"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			res, err := svc.Search(context.Background(), retrieval.Query{Text: "MAKE_RESERVATION", Context: tc.context})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Tool.ID != tc.want {
				t.Fatalf("first hit = %v, want %s", ids(res.Hits), tc.want)
			}
			found := false
			for _, e := range res.Entities {
				found = found || e.Key == tc.entity
			}
			if !found {
				t.Fatalf("entities %+v lack %q", res.Entities, tc.entity)
			}
			if res.Hits[0].Breakdown.Graph.Norm <= 0 {
				t.Fatalf("winner has no graph boost: %+v", res.Hits[0].Breakdown)
			}
		})
	}
}

func TestSearchStrategiesAndBreakdown(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("fx.convert", "CONVERT_CURRENCY", "finance", "Convert an amount of money between currencies using exchange rates."),
		retrievaltest.Manifest("weather.forecast", "GET_FORECAST", "weather", "Get the weather forecast for a city."),
		retrievaltest.Manifest("mail.send", "SEND_EMAIL", "communication", "Send an email message to a recipient."),
	}
	svc, _ := newService(t, retrieval.Options{}, ms...)
	for _, st := range []retrieval.Strategy{retrieval.StrategyHybrid, retrieval.StrategySemantic, retrieval.StrategyKeyword, retrieval.StrategySession} {
		t.Run(string(st), func(t *testing.T) {
			res, err := svc.Search(context.Background(), retrieval.Query{Text: "convert money to another currency", Strategy: st, Caller: access.Caller{SessionID: "s1"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Tool.ID != "fx.convert" {
				t.Fatalf("hits = %v, want fx.convert first", ids(res.Hits))
			}
			b := res.Hits[0].Breakdown
			sum := b.Semantic.Weighted + b.Phrase.Weighted + b.Keyword.Weighted + b.Subword.Weighted + b.Usage.Weighted + b.Neighbours.Weighted + b.QueryLog.Weighted + b.Verb.Weighted + b.History.Weighted + b.Success.Weighted + b.Graph.Weighted + b.Complexity.Weighted
			if d := sum - res.Hits[0].Score; d > 1e-9 || d < -1e-9 {
				t.Fatalf("breakdown sums to %v, score %v", sum, res.Hits[0].Score)
			}
			if res.Metadata.Strategy != st {
				t.Fatalf("strategy = %q", res.Metadata.Strategy)
			}
		})
	}
	t.Run("category", func(t *testing.T) {
		res, err := svc.Search(context.Background(), retrieval.Query{Text: "convert money", Strategy: retrieval.StrategyCategory, Category: "weather"})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Tool.Category != "weather" {
				t.Fatalf("category strategy returned %s (%s)", h.Tool.ID, h.Tool.Category)
			}
		}
	})
}

func TestSearchRejectsBadParams(t *testing.T) {
	svc, _ := newService(t, retrieval.Options{})
	tests := []struct {
		name  string
		q     retrieval.Query
		field string
	}{
		{"empty q", retrieval.Query{}, "q"},
		{"maxTools", retrieval.Query{Text: "x", MaxTools: 21}, "maxTools"},
		{"strategy", retrieval.Query{Text: "x", Strategy: "magic"}, "strategy"},
		{"phase", retrieval.Query{Text: "x", Phase: "later"}, "phase"},
		{"category required", retrieval.Query{Text: "x", Strategy: retrieval.StrategyCategory}, "category"},
		{"q too long", retrieval.Query{Text: strings.Repeat("word ", retrieval.MaxQueryBytes/5+1)}, "q"},
		{"context too long", retrieval.Query{Text: "x", Context: strings.Repeat("c", retrieval.MaxQueryBytes+1)}, "context"},
		{"NUL in q", retrieval.Query{Text: "a\x00b"}, "q"},
		{"escape in context", retrieval.Query{Text: "x", Context: "a\x1b[2Jb"}, "context"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Search(context.Background(), tc.q)
			if !errors.Is(err, fault.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if f := fault.Fields(err); len(f) == 0 || f[0].Path != tc.field {
				t.Fatalf("fields = %+v, want %s", f, tc.field)
			}
		})
	}
}

func TestRecordEventsFeedsUsageAndSession(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("a.tool", "DO_A", "misc", "Alpha utility for things."),
		retrievaltest.Manifest("b.tool", "DO_B", "misc", "Beta utility for things."),
	}
	svc, st := newService(t, retrieval.Options{}, ms...)
	ctx := context.Background()
	q := retrieval.Query{Text: "zebra migration tracker", Caller: access.Caller{SessionID: "s9"}}
	before, err := svc.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range before.Hits {
		if h.Tool.ID == "b.tool" && h.Breakdown.Usage.Norm != 0 {
			t.Fatalf("usage signal before any event: %+v", h.Breakdown.Usage)
		}
	}
	var evs []retrieval.Event
	for i := 0; i < 5; i++ {
		evs = append(evs, retrieval.Event{ToolID: "b.tool", SessionID: "s9", Query: "zebra migration tracker", Success: true})
	}
	if err := svc.RecordEvents(ctx, recorder, evs); err != nil {
		t.Fatal(err)
	}
	u, err := st.Usage(ctx, []string{"b.tool"})
	if err != nil || u["b.tool"].Uses != 5 || u["b.tool"].CentroidN != 5 {
		t.Fatalf("usage = %+v, %v", u, err)
	}
	after, err := svc.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if after.Metadata.CacheHit {
		t.Fatal("events must invalidate the cache")
	}
	if len(after.Hits) == 0 || after.Hits[0].Tool.ID != "b.tool" {
		t.Fatalf("after events hits = %v, want b.tool first", ids(after.Hits))
	}
	// One of the two tools has history, so the gate on usage evidence is
	// closed: the centroid is measured (Raw) and marks the evidence, and
	// the past queries themselves (the neighbours) carry it.
	b := after.Hits[0].Breakdown
	if b.Usage.Raw <= 0 || b.Neighbours.Norm < 0.99 || b.History.Norm != 1 {
		t.Fatalf("usage/history not applied: %+v", b)
	}

	// A query unlike every past one gets no neighbour vote: the signal is
	// absolute, not scaled up to the best weak match.
	other, err := svc.Search(ctx, retrieval.Query{Text: "alpha utility"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range other.Hits {
		if h.Breakdown.Neighbours.Norm > 0.5 {
			t.Fatalf("unrelated query got a strong neighbour vote: %s %+v", h.Tool.ID, h.Breakdown.Neighbours)
		}
	}

	err = svc.RecordEvents(ctx, recorder, []retrieval.Event{{ToolID: "nope", Success: true}})
	if !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("unknown tool: err = %v, want ErrInvalid", err)
	}
	if err := svc.RecordEvents(ctx, recorder, nil); !errors.Is(err, fault.ErrMalformed) {
		t.Fatalf("empty events: err = %v", err)
	}
}

func TestSuccessPriorDoesNotPunishUnusedTools(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("x.one", "DO_X", "misc", "Shared words here."),
		retrievaltest.Manifest("x.two", "DO_X", "misc", "Shared words here."),
	}
	svc, _ := newService(t, retrieval.Options{}, ms...)
	ctx := context.Background()
	// x.one fails every time; x.two is never used.
	var evs []retrieval.Event
	for i := 0; i < 10; i++ {
		evs = append(evs, retrieval.Event{ToolID: "x.one", Success: false})
	}
	if err := svc.RecordEvents(ctx, recorder, evs); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Search(ctx, retrieval.Query{Text: "shared words"})
	if err != nil {
		t.Fatal(err)
	}
	rate := map[string]float64{}
	for _, h := range res.Hits {
		rate[h.Tool.ID] = h.Breakdown.Success.Norm
	}
	if rate["x.two"] != 0.8 || rate["x.one"] >= rate["x.two"] {
		t.Fatalf("success rates %v: unused must score the prior 0.8, failing one less", rate)
	}
}

func TestCacheHitAndInvalidation(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	ms := []tool.Manifest{retrievaltest.Manifest("fx.convert", "CONVERT_CURRENCY", "finance", "Convert currencies.")}
	svc, _ := newService(t, retrieval.Options{Now: clock, CacheTTL: time.Minute}, ms...)
	ctx := context.Background()
	q := retrieval.Query{Text: "convert", Caller: access.Caller{UserID: "u1"}}
	search := func() bool {
		t.Helper()
		r, err := svc.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return r.Metadata.CacheHit
	}
	if search() {
		t.Fatal("first search hit the cache")
	}
	if !search() {
		t.Fatal("second search missed the cache")
	}
	other := q
	other.Caller = access.Caller{UserID: "u1", Groups: []string{"*"}}
	if r, _ := svc.Search(ctx, other); r.Metadata.CacheHit {
		t.Fatal("a caller with other visibility shared the cache entry")
	}
	tests := []struct {
		req  retrieval.InvalidateRequest
		gone bool
	}{
		{retrieval.InvalidateRequest{Scope: retrieval.ScopeUser, UserID: "u2"}, false},
		{retrieval.InvalidateRequest{Scope: retrieval.ScopeUser, UserID: "u1"}, true},
		{retrieval.InvalidateRequest{Scope: retrieval.ScopeTool, ToolID: "fx.convert"}, true},
		{retrieval.InvalidateRequest{Scope: retrieval.ScopeStrategy, Strategy: "semantic"}, false},
		{retrieval.InvalidateRequest{Scope: retrieval.ScopeStrategy, Strategy: "hybrid"}, true},
		{retrieval.InvalidateRequest{Scope: retrieval.ScopeAll}, true},
	}
	for _, tc := range tests {
		search()
		if _, err := svc.InvalidateCache(tc.req); err != nil {
			t.Fatalf("%+v: %v", tc.req, err)
		}
		if hit := search(); hit == tc.gone {
			t.Fatalf("%+v: cache hit = %v after invalidation", tc.req, hit)
		}
	}
	search()
	svc.Invalidate("fx.convert") // registry change hook
	if search() {
		t.Fatal("registry change did not invalidate")
	}
	now = now.Add(2 * time.Minute)
	if search() {
		t.Fatal("expired entry served")
	}
	for _, bad := range []retrieval.InvalidateRequest{{Scope: "x"}, {Scope: retrieval.ScopeUser}, {Scope: retrieval.ScopeTool}, {Scope: retrieval.ScopeStrategy}} {
		if _, err := svc.InvalidateCache(bad); !errors.Is(err, fault.ErrMalformed) {
			t.Fatalf("%+v: err = %v", bad, err)
		}
	}
}

func TestContextAssemblyPhases(t *testing.T) {
	var ms []tool.Manifest
	for _, w := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"} {
		m := retrievaltest.Manifest("t."+w, "DO_"+strings.ToUpper(w), "misc", "Tool "+w+" processes report documents. "+strings.Repeat(w+" detail. ", 40))
		m.CommonErrors = []tool.CommonError{{Error: w + " timeout", Resolution: "retry"}}
		ms = append(ms, m)
	}
	ms[0].Relationships = &tool.Relationships{Pairings: []tool.Pairing{{ToolID: "t.bravo", Score: 0.9, Sequence: "after"}}, Alternatives: []string{"t.charlie"}}
	svc, _ := newService(t, retrieval.Options{}, ms...)
	ctx := context.Background()
	tests := []struct {
		phase                 retrieval.Phase
		index, detailed       bool
		maxDetailed           int
		examples, errs, pairs bool
	}{
		{retrieval.PhaseInitialPlanning, true, false, 0, false, false, false},
		{retrieval.PhaseToolSelection, true, true, 3, true, false, false},
		{retrieval.PhaseExecutionPrep, false, true, 5, false, false, true},
		{retrieval.PhaseErrorRecovery, false, true, 3, false, true, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.phase), func(t *testing.T) {
			res, err := svc.Search(ctx, retrieval.Query{Text: "alpha report documents", Phase: tc.phase, MaxTools: 10})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Context
			if (len(c.Index) > 0) != tc.index || (len(c.Detailed) > 0) != tc.detailed || len(c.Detailed) > tc.maxDetailed {
				t.Fatalf("index %d, detailed %d", len(c.Index), len(c.Detailed))
			}
			md := c.Markdown()
			if tc.index && !strings.Contains(md, "# Available Tools (Lightweight Index)\nTotal Tools: 6") {
				t.Fatalf("markdown lacks index header:\n%s", md)
			}
			if tc.detailed && !strings.Contains(md, "# Detailed Tool Manifests (Retrieved for this query)") {
				t.Fatalf("markdown lacks detailed header:\n%s", md)
			}
			if got := strings.Contains(md, "### Usage Examples"); got != tc.examples {
				t.Fatalf("examples shown = %v", got)
			}
			if got := strings.Contains(md, "### Common Errors"); got != tc.errs {
				t.Fatalf("error patterns shown = %v", got)
			}
			if tc.pairs && !strings.Contains(md, "commonPairings: t.bravo (after)") {
				t.Fatalf("pairings missing:\n%s", md)
			}
			m := res.Metadata
			if m.TokensUsed != retrieval.EstimateTokens(md) || m.TokensUsed > m.TokenBudget || m.TokensAllManifests <= m.TokensUsed {
				t.Fatalf("tokens used %d budget %d all %d", m.TokensUsed, m.TokenBudget, m.TokensAllManifests)
			}
			if m.TokenReduction <= 0 || m.TokenReduction >= 1 {
				t.Fatalf("reduction = %v", m.TokenReduction)
			}
			fns := c.OpenAI()
			if len(fns) != len(c.Detailed) {
				t.Fatalf("openai functions %d, detailed %d", len(fns), len(c.Detailed))
			}
			for _, f := range fns {
				var p struct {
					Type     string   `json:"type"`
					Required []string `json:"required"`
				}
				if err := json.Unmarshal(f.Function.Parameters, &p); err != nil || f.Type != "function" || p.Type != "object" || len(p.Required) != 1 {
					t.Fatalf("openai function %+v: %v", f, err)
				}
				if !tool.FunctionNameRe.MatchString(f.Function.Name) || c.OpenAINames()[f.Function.Name] == "" {
					t.Fatalf("openai function name %q is not valid or does not map back (%v)", f.Function.Name, c.OpenAINames())
				}
			}
		})
	}
}

func TestBestMatchDistance(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("fx.convert", "CONVERT_CURRENCY", "finance", "Convert money between currencies."),
		retrievaltest.Manifest("mail.send", "SEND_EMAIL", "communication", "Send an email."),
	}
	svc, _ := newService(t, retrieval.Options{}, ms...)
	h, dist, err := svc.Best(context.Background(), "convert currency money", access.Caller{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Tool.ID != "fx.convert" || dist <= 0 || dist >= 0.8 {
		t.Fatalf("best = %s at %v", h.Tool.ID, dist)
	}
	_, _, err = svc.Best(context.Background(), "convert", access.Caller{Groups: []string{}})
	if !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("no visible tools: err = %v", err)
	}
}

// TestQueryLogSignal: words of past served queries that a tool's own text
// lacks find the tool, and a new Service over the same store (a restart)
// rebuilds the query log and the neighbours' exemplars from the store's
// served queries without counting any event twice.
func TestQueryLogSignal(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("a.tool", "DO_A", "misc", "Alpha utility for things."),
		retrievaltest.Manifest("b.tool", "DO_B", "misc", "Beta utility for things."),
	}
	svc, st := newService(t, retrieval.Options{}, ms...)
	ctx := context.Background()
	evs := []retrieval.Event{
		{ToolID: "b.tool", SessionID: "s1", Query: "track the zebra migration", Success: true},
		{ToolID: "b.tool", SessionID: "s2", Query: "where are the zebras now", Success: true},
		{ToolID: "a.tool", SessionID: "s3", Query: "zebra crossing", Success: false}, // failures do not count
	}
	if err := svc.RecordEvents(ctx, recorder, evs); err != nil {
		t.Fatal(err)
	}
	breakdown := func(s *retrieval.Service, id string) retrieval.Breakdown {
		t.Helper()
		res, err := s.Search(ctx, retrieval.Query{Text: "zebra migration", Strategy: retrieval.StrategyHybrid})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Tool.ID != "b.tool" {
			t.Fatalf("hits = %v, want b.tool first", ids(res.Hits))
		}
		for _, h := range res.Hits {
			if h.Tool.ID == id {
				return h.Breakdown
			}
		}
		return retrieval.Breakdown{}
	}
	if b := breakdown(svc, "b.tool").QueryLog; b.Raw <= 0 || b.Weighted <= 0 {
		t.Fatalf("b.tool query-log signal = %+v, want > 0", b)
	}
	if a := breakdown(svc, "a.tool").QueryLog; a.Raw != 0 {
		t.Fatalf("a failed event fed the query log: %+v", a)
	}
	before := breakdown(svc, "b.tool")
	after := breakdown(retrieval.New(st, emb, retrieval.Options{}), "b.tool")
	if after.Neighbours.Raw <= 0 || math.Abs(after.Neighbours.Raw-before.Neighbours.Raw) > 1e-6 || after.QueryLog.Raw != before.QueryLog.Raw {
		t.Fatalf("after a restart: neighbours %v, query log %v; before: %v, %v", after.Neighbours.Raw, after.QueryLog.Raw, before.Neighbours.Raw, before.QueryLog.Raw)
	}

	restarted := retrieval.New(st, emb, retrieval.Options{})
	if err := restarted.RecordEvents(ctx, recorder, []retrieval.Event{{ToolID: "b.tool", Query: "zebra herd", Success: true}}); err != nil {
		t.Fatal(err)
	}
	got := breakdown(restarted, "b.tool")
	want := breakdown(retrieval.New(st, emb, retrieval.Options{}), "b.tool")
	if got.QueryLog.Raw <= 0 || math.Abs(got.QueryLog.Raw-want.QueryLog.Raw) > 1e-12 || math.Abs(got.Neighbours.Raw-want.Neighbours.Raw) > 1e-6 {
		t.Fatalf("after a restart and one more event: query log %v, neighbours %v; rebuilt from the store: %v, %v",
			got.QueryLog.Raw, got.Neighbours.Raw, want.QueryLog.Raw, want.Neighbours.Raw)
	}
}

// TestMemoryFollowsTheStore: the query log and the neighbours' exemplars
// learn the served queries that other processes write to the store (a
// worker recording the tools its workflows ran, another API replica) within
// FollowEvery, without a restart, and count each event once.
func TestMemoryFollowsTheStore(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("a.tool", "DO_A", "misc", "Alpha utility for things."),
		retrievaltest.Manifest("b.tool", "DO_B", "misc", "Beta utility for things."),
	}
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	clock := func() time.Time { return now }
	opts := retrieval.Options{FollowEvery: 2 * time.Second, Now: clock}
	replica, st := newService(t, opts, ms...)
	other := retrieval.New(st, emb, opts)
	queryLog := func(s *retrieval.Service, id string) float64 {
		t.Helper()
		res, err := s.Search(ctx, retrieval.Query{Text: "zebra migration", MaxTools: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Tool.ID == id {
				return h.Breakdown.QueryLog.Raw
			}
		}
		return 0
	}
	if got := queryLog(replica, "b.tool"); got != 0 {
		t.Fatalf("query log before any event = %v", got)
	}
	// Another replica records an event; a worker writes one straight to the
	// store, without an embedding, as the execute activity does.
	if err := other.RecordEvents(ctx, recorder, []retrieval.Event{{ToolID: "b.tool", Query: "track the zebra migration", Success: true}}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "b.tool", Query: "zebra herds on the move", Success: true, At: now}}); err != nil {
		t.Fatal(err)
	}
	if got := queryLog(replica, "b.tool"); got != 0 {
		t.Fatalf("the memory read the store before FollowEvery passed: query log %v", got)
	}
	now = now.Add(2 * time.Second)
	followed := queryLog(replica, "b.tool")
	rebuilt := queryLog(retrieval.New(st, emb, opts), "b.tool")
	if followed <= 0 || math.Abs(followed-rebuilt) > 1e-12 {
		t.Fatalf("after FollowEvery: query log %v, rebuilt from the store %v; want the same, > 0", followed, rebuilt)
	}
	// The replica that recorded an event learned the worker's too, each once.
	if got := queryLog(other, "b.tool"); math.Abs(got-rebuilt) > 1e-12 {
		t.Fatalf("recording replica: query log %v, rebuilt %v", got, rebuilt)
	}
	// Later reads add only what is new.
	now = now.Add(time.Minute)
	if got := queryLog(replica, "b.tool"); math.Abs(got-rebuilt) > 1e-12 {
		t.Fatalf("a second read counted events again: %v, want %v", got, rebuilt)
	}
	// FollowEvery < 0: only this process's own events.
	own := retrieval.New(st, emb, retrieval.Options{FollowEvery: -1, Now: clock})
	before := queryLog(own, "b.tool")
	if err := st.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "b.tool", Query: "zebra stripes", Success: true, At: now}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if got := queryLog(own, "b.tool"); got != before {
		t.Fatalf("FollowEvery -1 followed the store: %v, was %v", got, before)
	}
}

// TestRecordUsageLearns: an execution Toolsmith ran itself (the execute
// activity's event, without an embedding) teaches the ranking as a
// planner's event does: the query is embedded into the usage centroid and
// the neighbours, its words reach the query log, and the session's tools
// pair. Without an embedder the event is still stored, and the error says
// what was lost.
func TestRecordUsageLearns(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("trip.flight", "BOOK_FLIGHT", "travel", "Book a flight."),
		retrievaltest.Manifest("trip.hotel", "BOOK_HOTEL", "travel", "Book a hotel room."),
	}
	svc, st := newService(t, retrieval.Options{}, ms...)
	ctx := context.Background()
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	if err := svc.RecordUsage(ctx, []graph.UsageEvent{
		{ToolID: "trip.flight", SessionID: "ana/s1", UserID: "ana", Level: "user", Query: " BOOK FLIGHT: zebra airways ", Success: true, At: t0},
		{ToolID: "trip.hotel", SessionID: "ana/s1", UserID: "ana", Level: "user", Query: "BOOK HOTEL", Success: true, At: t0.Add(time.Minute)},
		{ToolID: "trip.hotel", SessionID: "bob/s1", UserID: "bob", Level: "admin", Success: true, At: t0},
		{ToolID: "trip.flight", SessionID: "bob/s1", UserID: "bob", Level: "admin", Success: true, At: t0.Add(time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
	u, err := st.Usage(ctx, []string{"trip.flight"})
	if err != nil || u["trip.flight"].CentroidN != 1 {
		t.Fatalf("usage = %+v, %v; want the query embedded into the centroid", u, err)
	}
	res, err := svc.Search(ctx, retrieval.Query{Text: "zebra airways", MaxTools: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Tool.ID != "trip.flight" || res.Hits[0].Breakdown.QueryLog.Raw <= 0 || res.Hits[0].Breakdown.Neighbours.Raw <= 0 {
		t.Fatalf("hits %v (first %+v); want trip.flight by its served query", ids(res.Hits), res.Hits)
	}
	rel, err := svc.Related(ctx, "trip.flight", retrieval.RelPairings, 5, access.Caller{})
	if err != nil || len(rel) != 1 || rel[0].ToolID != "trip.hotel" || rel[0].Source != retrieval.PairLearned {
		t.Fatalf("pairings of trip.flight = %+v, %v; want trip.hotel, learned", rel, err)
	}

	broken := retrieval.New(st, failingEmbedder{}, retrieval.Options{})
	err = broken.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "trip.hotel", Level: "user", Query: "book hotel", Success: true}})
	if err == nil || !strings.Contains(err.Error(), "without query embeddings") {
		t.Fatalf("RecordUsage without an embedder: err = %v, want it to say the embeddings are missing", err)
	}
	if served, _ := st.ServedQueriesAfter(ctx, 0, 10); len(served) != 3 || served[2].Query != "book hotel" || served[2].Embedding != nil {
		t.Fatalf("served queries = %+v; want the event stored without an embedding", served)
	}

	// A guest's or an anonymous caller's run counts as a use and teaches
	// no search: its query is not kept (access.MayTeach).
	for _, level := range []string{"guest", ""} {
		if err := svc.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "trip.hotel", UserID: "key:g", Level: level, Query: "zebra savanna lodge", Success: true}}); err != nil {
			t.Fatal(err)
		}
	}
	if served, _ := st.ServedQueriesAfter(ctx, 0, 10); len(served) != 3 {
		t.Fatalf("served queries = %+v; a guest's and an anonymous run's queries were kept", served)
	}
	if u, _ := st.Usage(ctx, []string{"trip.hotel"}); u["trip.hotel"].Uses != 5 || u["trip.hotel"].CentroidN != 1 {
		t.Fatalf("usage of trip.hotel = %+v; want five uses (the guest's and the anonymous run among them) and only the user's query in the centroid", u["trip.hotel"])
	}
}

// TestRecordUsageReusesTheSearchEmbedding: a run records the query it
// searched, whose embedding the search cached; recording it embeds
// nothing again.
func TestRecordUsageReusesTheSearchEmbedding(t *testing.T) {
	ms := []tool.Manifest{retrievaltest.Manifest("trip.flight", "BOOK_FLIGHT", "travel", "Book a flight.")}
	st := retrievaltest.Store(t, emb)
	retrievaltest.Register(t, st, emb, ms...)
	counted := &countingEmbedder{Embedder: emb}
	svc := retrieval.New(st, counted, retrieval.Options{})
	ctx := context.Background()
	if _, err := svc.Search(ctx, retrieval.Query{Text: "BOOK FLIGHT: to Oslo"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "trip.flight", Level: "user", Query: "BOOK FLIGHT: to Oslo", Success: true}}); err != nil {
		t.Fatal(err)
	}
	if counted.docs != 0 {
		t.Fatalf("RecordUsage embedded %d texts; the search had cached the query's embedding", counted.docs)
	}
	if u, _ := st.Usage(ctx, []string{"trip.flight"}); u["trip.flight"].CentroidN != 1 {
		t.Fatalf("usage = %+v; want the cached embedding in the centroid", u)
	}
	if err := svc.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "trip.flight", Level: "user", Query: "never searched", Success: true}}); err != nil || counted.docs != 1 {
		t.Fatalf("a query never searched: err %v, embedded %d texts, want 1", err, counted.docs)
	}
}

type countingEmbedder struct {
	embed.Embedder
	docs int
}

func (c *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.docs += len(texts)
	return c.Embedder.EmbedDocuments(ctx, texts)
}

type failingEmbedder struct{}

func (failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("no model")
}

func (failingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("no model")
}

// TestYoungQueryLogDoesNotSwamp: while few tools have served queries, bm25's
// idf is small, so one past query sharing a common word with a new query
// does not outrank the tool that matches the new query.
func TestYoungQueryLogDoesNotSwamp(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("fx.convert", "CONVERT_CURRENCY", "finance", "Convert an amount of money between currencies using exchange rates."),
		retrievaltest.Manifest("files.convert", "CONVERT_FILE", "files", "Change a document from one file format to another."),
	}
	svc, _ := newService(t, retrieval.Options{}, ms...)
	ctx := context.Background()
	if err := svc.RecordEvents(ctx, recorder, []retrieval.Event{{ToolID: "files.convert", Query: "convert this report", Success: true}}); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Search(ctx, retrieval.Query{Text: "convert money between currencies with exchange rates"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Tool.ID != "fx.convert" {
		t.Fatalf("hits = %v, want fx.convert first", ids(res.Hits))
	}
	for _, h := range res.Hits {
		if h.Tool.ID == "files.convert" && (h.Breakdown.QueryLog.Raw <= 0 || h.Breakdown.QueryLog.Weighted > 0.5) {
			t.Fatalf("files.convert's query-log signal = %+v, want a small positive boost", h.Breakdown.QueryLog)
		}
	}
}

// Tools used together in a caller's session within the window become
// learned pairings, served beside declared ones and marked, once two
// callers have used them together; uses far apart, in different sessions,
// by different callers under one session id, or by anonymous callers or
// guest keys do not pair, and one session repeated counts once.
func TestLearnedPairings(t *testing.T) {
	ms := []tool.Manifest{
		retrievaltest.Manifest("trip.flight", "BOOK_FLIGHT", "travel", "Book a flight."),
		retrievaltest.Manifest("trip.hotel", "BOOK_HOTEL", "travel", "Book a hotel room."),
		retrievaltest.Manifest("trip.car", "RENT_CAR", "travel", "Rent a car."),
	}
	svc, st := newService(t, retrieval.Options{}, ms...)
	ctx := context.Background()
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	pairings := func(id string) []retrieval.RelatedTool {
		t.Helper()
		rel, err := svc.Related(ctx, id, retrieval.RelPairings, 5, access.Caller{})
		if err != nil {
			t.Fatal(err)
		}
		return rel
	}
	// Anonymous runs sharing a session id (anyone can send one) teach no
	// pairing, however many callers send it.
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Minute)
		if err := svc.RecordUsage(ctx, []graph.UsageEvent{
			{ToolID: "trip.car", SessionID: "anonymous/anon1", Success: true, At: at},
			{ToolID: "trip.hotel", SessionID: "anonymous/anon1", Success: true, At: at},
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Guest keys' runs, each in its own session, are recorded but teach no
	// pairing: a guest may not teach the shared learned data
	// (access.MayTeach), however many guest keys there are.
	for _, guest := range []string{"key:g1", "key:g2", "key:g3"} {
		if err := svc.RecordUsage(ctx, []graph.UsageEvent{
			{ToolID: "trip.car", SessionID: guest + "/gs1", UserID: guest, Level: "guest", Success: true, At: t0},
			{ToolID: "trip.flight", SessionID: guest + "/gs1", UserID: guest, Level: "guest", Success: true, At: t0.Add(time.Minute)},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if u, err := st.Usage(ctx, []string{"trip.car"}); err != nil || u["trip.car"].Uses < 3 {
		t.Fatalf("usage of trip.car = %+v, %v; want the guests' runs recorded", u, err)
	}
	// Two users' events under one session id are not one session.
	if err := svc.RecordEvents(ctx, recorder, []retrieval.Event{
		{ToolID: "trip.car", SessionID: "shared", UserID: "ana", Success: true, At: t0},
		{ToolID: "trip.flight", SessionID: "shared", UserID: "bob", Success: true, At: t0.Add(time.Minute)},
		{ToolID: "trip.car", SessionID: "shared", UserID: "carol", Success: true, At: t0},
		{ToolID: "trip.flight", SessionID: "shared", UserID: "dave", Success: true, At: t0.Add(time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
	// ana's session pairs flight and hotel, repeated: it counts once, and
	// one caller alone shows it to no one.
	ana := []retrieval.Event{
		{ToolID: "trip.flight", SessionID: "s1", UserID: "ana", Success: true, At: t0},
		{ToolID: "trip.hotel", SessionID: "s1", UserID: "ana", Success: true, At: t0.Add(2 * time.Minute)},
		{ToolID: "trip.car", SessionID: "s1", UserID: "ana", Success: true, At: t0.Add(2 * time.Hour)}, // too late to pair
		{ToolID: "trip.car", SessionID: "s2", UserID: "ana", Success: true, At: t0},                    // another session
	}
	if err := svc.RecordEvents(ctx, recorder, ana); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		at := t0.Add(time.Duration(3+i) * time.Minute)
		if err := svc.RecordEvents(ctx, recorder, []retrieval.Event{
			{ToolID: "trip.flight", SessionID: "s1", UserID: "ana", Success: true, At: at},
			{ToolID: "trip.hotel", SessionID: "s1", UserID: "ana", Success: true, At: at},
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"trip.flight", "trip.hotel", "trip.car"} {
		if rel := pairings(id); len(rel) != 0 {
			t.Fatalf("pairings of %s = %+v; want none (anonymous sessions, guest keys, one caller, or callers sharing a session id)", id, rel)
		}
	}
	// bob's session is a second caller: the pairing is shown, with one
	// use together per session (ana's repeated session counts once).
	if err := svc.RecordEvents(ctx, recorder, []retrieval.Event{
		{ToolID: "trip.hotel", SessionID: "s1", UserID: "bob", Success: true, At: t0},
		{ToolID: "trip.flight", SessionID: "s1", UserID: "bob", Success: true, At: t0.Add(time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
	rel := pairings("trip.flight")
	if len(rel) != 1 || rel[0].ToolID != "trip.hotel" || rel[0].Source != retrieval.PairLearned || rel[0].RelationshipScore <= 0 {
		t.Fatalf("pairings of trip.flight: %+v", rel)
	}
	hits, err := st.LearnedPairs(ctx, "trip.flight", 5, graph.Filter{}, t0.Add(time.Hour))
	if err != nil || len(hits) != 1 || math.Abs(hits[0].Score-2) > 0.01 {
		t.Fatalf("learned pairs of trip.flight = %+v, %v; want trip.hotel at 2 (one per caller's session)", hits, err)
	}
	// A new session of ana's strengthens the pair.
	if err := svc.RecordEvents(ctx, recorder, []retrieval.Event{
		{ToolID: "trip.flight", SessionID: "s3", UserID: "ana", Success: true, At: t0.Add(time.Hour)},
		{ToolID: "trip.hotel", SessionID: "s3", UserID: "ana", Success: true, At: t0.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	again := pairings("trip.hotel")
	if len(again) != 1 || again[0].ToolID != "trip.flight" || again[0].RelationshipScore <= rel[0].RelationshipScore {
		t.Fatalf("pairings of trip.hotel: %+v (before %v)", again, rel[0].RelationshipScore)
	}
}

// phraseTools and phraseQuery: a long query whose framing matches the trip
// planner and whose last words name the forecast.
func phraseTools() []tool.Manifest {
	return []tool.Manifest{
		retrievaltest.Manifest("trip.plan", "PLAN_TRIP", "travel", "Itinerary planner for holidays: plan a family trip next month."),
		retrievaltest.Manifest("weather.forecast", "GET_FORECAST", "weather", "Weather forecast."),
	}
}

const phraseQuery = "Next month the kids and I go on a family trip to Lisbon, can you tell me the weather forecast"

// TestPhraseSignal: a long query's phrase that names a tool's task counts
// for that tool although the whole query's words, spread over its framing,
// match another tool's description more often.
func TestPhraseSignal(t *testing.T) {
	w := retrieval.DefaultWeights()
	w.Phrase = 1
	svc, _ := newService(t, retrieval.Options{Weights: &w}, phraseTools()...)
	query := phraseQuery
	res, err := svc.Search(context.Background(), retrieval.Query{Text: query})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]retrieval.Breakdown{}
	for _, h := range res.Hits {
		by[h.Tool.ID] = h.Breakdown
	}
	trip, weather := by["trip.plan"], by["weather.forecast"]
	if trip.Semantic.Raw <= weather.Semantic.Raw {
		t.Fatalf("set-up: the whole query should match the trip planner better (%.3f vs %.3f)", trip.Semantic.Raw, weather.Semantic.Raw)
	}
	if weather.Phrase.Raw <= trip.Phrase.Raw || weather.Phrase.Norm <= trip.Phrase.Norm || weather.Phrase.Weighted <= 0 {
		t.Fatalf("phrase signal: weather %+v, trip %+v; want weather's higher", weather.Phrase, trip.Phrase)
	}
	// The fulfilment decision ranks by the whole query: no phrases (and its
	// result is not the cached one above).
	whole, err := svc.Search(context.Background(), retrieval.FulfilmentQuery(query, "", access.Caller{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range whole.Hits {
		if h.Breakdown.Phrase != (retrieval.Signal{}) {
			t.Fatalf("whole query: %s has phrase %+v", h.Tool.ID, h.Breakdown.Phrase)
		}
	}
	if whole.Metadata.CacheHit || len(whole.Hits) == 0 || whole.Hits[0].Tool.ID != "trip.plan" {
		t.Fatalf("whole query: cache hit %v, hits %v; want a fresh ranking with trip.plan first", whole.Metadata.CacheHit, ids(whole.Hits))
	}
	// A short query is its own phrase: the signal adds nothing.
	res, err = svc.Search(context.Background(), retrieval.Query{Text: "weather forecast for tomorrow"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Breakdown.Phrase != (retrieval.Signal{}) {
			t.Fatalf("short query: %s has phrase %+v", h.Tool.ID, h.Breakdown.Phrase)
		}
	}
}

// recorder is an admin importing history: its reports are learned as
// given (a user's only when runs back them, trust_test.go).
var recorder = access.Caller{UserID: "recorder", Level: "admin"}

// countingStore counts GetTool calls.
type countingStore struct {
	graph.Store
	gets int
}

func (c *countingStore) GetTool(ctx context.Context, id string) (graph.Tool, error) {
	c.gets++
	return c.Store.GetTool(ctx, id)
}

// After WarmCatalogue a search reads only the manifests it details, not
// every visible tool's to estimate the catalogue's tokens.
func TestWarmCatalogueSparesTheFirstSearch(t *testing.T) {
	var ms []tool.Manifest
	for i := range 40 {
		ms = append(ms, retrievaltest.Manifest(fmt.Sprintf("t.%02d", i), "DO_THING", "misc", fmt.Sprintf("does thing number %d for the user", i)))
	}
	ctx := context.Background()
	caller := access.Caller{UserID: "u", Level: "user"}
	for _, warm := range []bool{false, true} {
		st := retrievaltest.Store(t, emb)
		retrievaltest.Register(t, st, emb, ms...)
		cs := &countingStore{Store: st}
		svc := retrieval.New(cs, emb, retrieval.Options{})
		if warm {
			if err := svc.WarmCatalogue(ctx, access.Caller{Level: "owner", Groups: []string{access.Wildcard}}); err != nil {
				t.Fatal(err)
			}
		}
		cs.gets = 0
		if _, err := svc.Search(ctx, retrieval.Query{Text: "does thing number 7", Caller: caller}); err != nil {
			t.Fatal(err)
		}
		if warm && cs.gets > 10 {
			t.Errorf("after the warm-up the search read %d manifests", cs.gets)
		}
		if !warm && cs.gets < len(ms) {
			t.Errorf("without it the search read only %d manifests: the test measures nothing", cs.gets)
		}
	}
}

// TestEntitiesOfHiddenToolsStayHidden: an entity only a tool hidden from
// the caller is about is neither shown nor used; a caller who may execute
// the tool sees it.
func TestEntitiesOfHiddenToolsStayHidden(t *testing.T) {
	comic := retrievaltest.Manifest("xkcd.latest_comic", "GET_COMIC", "fun", "Fetch the latest comic strip.")
	comic.PermissionsRequired = []string{access.AnyOf([]string{"vet"}, nil)}
	comic.Entities = []tool.Entity{{Name: "xkcd", Type: "Webcomic"}}
	svc, _ := newService(t, retrieval.Options{}, append(retrievaltest.Reservation(), comic)...)
	keys := func(c access.Caller) []string {
		t.Helper()
		res, err := svc.Search(context.Background(), retrieval.Query{Text: "GET_COMIC", Context: "the latest xkcd", Caller: c})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range res.Entities {
			out = append(out, e.Key)
		}
		for _, h := range res.Hits {
			if h.Tool.ID == comic.ToolID && !slices.Contains(c.Roles, "vet") {
				t.Fatalf("hidden tool in hits: %v", ids(res.Hits))
			}
		}
		return out
	}
	if got := keys(access.Caller{UserID: "u", Level: "user"}); slices.Contains(got, "xkcd") {
		t.Fatalf("a caller without the vet role sees entities %v", got)
	}
	if got := keys(access.Caller{UserID: "v", Level: "user", Roles: []string{"vet"}}); !slices.Contains(got, "xkcd") {
		t.Fatalf("a vet sees entities %v, want xkcd", got)
	}
}
