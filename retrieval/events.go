package retrieval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Event is one use of a tool: the query (or verb text) it served, in a
// session, and whether it succeeded. It is the single input of learning
// from use: the session events endpoint, the usage batch endpoint and
// `toolsmith eval --history` all go through RecordEvents.
type Event struct {
	ToolID    string    `json:"toolId"`
	SessionID string    `json:"sessionId,omitempty"`
	UserID    string    `json:"userId,omitempty"`
	Query     string    `json:"query,omitempty"`
	Success   bool      `json:"success"`
	LatencyMs int64     `json:"latencyMs,omitempty"`
	At        time.Time `json:"at,omitempty"`
}

// MaxEvents bounds one RecordEvents call by an admin (an import); other
// callers record at most MaxCallerEvents a call, and their calls count
// against their execute rate limit (api.Rules), so no one caller's volume
// outweighs everyone else's use.
const (
	MaxEvents       = 10000
	MaxCallerEvents = 100
)

// MaxEventIDBytes bounds an event's toolId, sessionId and userId (a
// sessionId as stored: the caller's id, "/", the session's). Its query is
// bounded as a search's q is, by MaxQueryBytes.
const MaxEventIDBytes = 512

// checkEventText records in v a text of events[i] over max bytes or with a
// control character (the check tool texts use): a reported event is stored
// and shown in analytics, so it is bounded and printable.
func checkEventText(v *fault.ValidationError, i int, field, text string, max int) {
	path := fmt.Sprintf("events[%d].%s", i, field)
	if len(text) > max {
		v.Add(path, "must be at most %d bytes, got %d", max, len(text))
	} else if j := tool.ControlAt(text); j >= 0 {
		v.Add(path, "must not contain control characters, got %U at byte %d", []rune(text[j:])[0], j)
	}
}

// FutureSkew is how far past the server's clock a reported event's time
// may be (clocks differ); a later one is refused.
const FutureSkew = time.Minute

// earliestImport is the earliest time an admin's imported event may carry:
// an earlier one (the zero Unix time, a year without its century) is a
// mistake, not history.
var earliestImport = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// checkEventTime records in v an event time outside the window a report
// can have: after FutureSkew past now, or, before earliest (for an admin's
// import, 2000-01-01; for anyone else's, ReportWindow before now, since no
// run older than that can back the report). A zero time means now.
func checkEventTime(v *fault.ValidationError, i int, at, now time.Time, trusted bool) {
	if at.IsZero() {
		return
	}
	path := fmt.Sprintf("events[%d].at", i)
	switch {
	case at.After(now.Add(FutureSkew)):
		v.Add(path, "must not be more than %s in the future (%s is after the server's %s)",
			FutureSkew, at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case trusted && at.Before(earliestImport):
		v.Add(path, "must not be before %s, got %s", earliestImport.Format(time.DateOnly), at.UTC().Format(time.RFC3339))
	case !trusted && at.Before(now.Add(-ReportWindow)):
		v.Add(path, "must be within the last %g h, as only a run in that window can back a report (got %s, the server's time is %s)",
			ReportWindow.Hours(), at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
}

// ReportWindow is how long an observed run can back a report: a
// non-admin caller's reported use is learned only if the caller ran that
// tool through Toolsmith within ReportWindow before the report.
const ReportWindow = 24 * time.Hour

// Tally is what a report call taught. Recorded counts the events the call
// accepted, Learned those written and learned from, Unbacked those left
// out (not stored) because no observed run backed them, Unrelated those
// left out because their query is not about the tool; Message says why
// when any was left out.
type Tally struct {
	Recorded int `json:"recorded"`
	Learned  int `json:"learned"`
	Unbacked int `json:"unbacked"`
	// Unrelated counts the successes left out (not stored) because their
	// query is not about the tool (teaches: ReportFloor and TeachMargin).
	Unrelated int    `json:"unrelated"`
	Message   string `json:"message,omitempty"`
}

// RecordEvents is Report without the tally.
func (s *Service) RecordEvents(ctx context.Context, caller access.Caller, events []Event) error {
	_, err := s.Report(ctx, caller, events)
	return err
}

// Report records the uses a caller reports (the session events and usage
// batch routes, `toolsmith eval --history`). It validates the events,
// checks that the caller may see every tool named, keeps the reports it
// can trust (backed), embeds the queries of successful ones in one batch
// (they feed the tools' usage centroids) and writes them atomically
// (record). Ranking evidence changed, so the result cache is cleared.
//
// Nobody becomes someone by saying so, and nothing is learned just by
// saying so: everyone's ranking learns from a report only when Toolsmith
// saw the use. An admin's import (level admin and above) is trusted, as an
// operator importing history; anyone else's report is learned only when
// one of the caller's own observed runs of that tool within ReportWindow
// backs it, each run backing at most one report (a reported success needs
// a successful run). The other reports are accepted but not stored, so
// nothing the ranking learns from (usage counts and centroid, query log,
// neighbours, popularity, success rate, pairings, session history,
// retraining) sees them; the tally says how many.
func (s *Service) Report(ctx context.Context, caller access.Caller, events []Event) (Tally, error) {
	if len(events) == 0 {
		return Tally{}, fault.Malformed("events", "must not be empty")
	}
	// What teaches the shared ranking is a signed-in user's own use: a
	// guest's word is not evidence.
	if !access.MayTeach(caller.Level) {
		return Tally{}, fmt.Errorf("events: recording uses needs level %s or above (this caller is %s): %w",
			access.TeachLevel, access.Levels[access.LevelRank(caller.Level)], fault.ErrForbidden)
	}
	trusted := access.LevelRank(caller.Level) >= access.LevelRank("admin")
	limit := MaxCallerEvents
	if trusted {
		limit = MaxEvents
	}
	if len(events) > limit {
		return Tally{}, fault.Malformed("events", "at most %d events per call for level %s, got %d", limit, caller.Level, len(events))
	}
	bad := &fault.ValidationError{Malformed: true}
	for i, e := range events {
		checkEventText(bad, i, "toolId", e.ToolID, MaxEventIDBytes)
		checkEventText(bad, i, "sessionId", e.SessionID, MaxEventIDBytes)
		checkEventText(bad, i, "userId", e.UserID, MaxEventIDBytes)
		checkEventText(bad, i, "query", e.Query, MaxQueryBytes)
	}
	if len(bad.Fields) > 0 {
		return Tally{}, fmt.Errorf("retrieval: record events: %w", bad)
	}
	verr := &fault.ValidationError{}
	now := s.opts.Now()
	checked := map[string]bool{}
	toolVecs := map[string][]float32{}
	for i, e := range events {
		id := strings.TrimSpace(e.ToolID)
		if id == "" {
			verr.Add(fmt.Sprintf("events[%d].toolId", i), "is required")
			continue
		}
		if e.LatencyMs < 0 {
			verr.Add(fmt.Sprintf("events[%d].latencyMs", i), "must not be negative")
		}
		checkEventTime(verr, i, e.At, now, trusted)
		if _, ok := checked[id]; ok {
			continue
		}
		t, err := s.store.GetTool(ctx, id)
		switch {
		case err == nil && caller.Allows(&t.ToolSummary):
			checked[id] = true
			toolVecs[id] = t.Embedding
		case err == nil || isNotFound(err):
			checked[id] = false
			verr.Add(fmt.Sprintf("events[%d].toolId", i), "unknown tool %q", id)
		default:
			return Tally{}, fmt.Errorf("retrieval: record events: %w", err)
		}
	}
	if err := verr.Err(); err != nil {
		return Tally{}, fmt.Errorf("retrieval: record events: %w", err)
	}
	out := make([]graph.UsageEvent, len(events))
	for i, e := range events {
		at := e.At
		if at.IsZero() {
			at = now
		}
		out[i] = graph.UsageEvent{
			ToolID: strings.TrimSpace(e.ToolID), SessionID: e.SessionID, UserID: e.UserID,
			Query: strings.TrimSpace(e.Query), Success: e.Success, LatencyMs: e.LatencyMs, At: at,
			Origin: graph.OriginReported, Level: caller.Level,
		}
	}
	tally := Tally{Recorded: len(out)}
	if err := s.embedQueries(ctx, out); err != nil {
		return Tally{}, err
	}
	if !trusted {
		// A reported success teaches what its query says only when the
		// query is like the tool at all: a real run of a harmless tool must
		// not carry an unrelated query ("book a table" on a currency tool)
		// into everyone's ranking. It is left out before backing, so it
		// spends no run.
		var far []string
		var err error
		if out, far, err = s.nearReports(ctx, out, toolVecs); err != nil {
			return Tally{}, err
		}
		tally.Unrelated = len(events) - len(out)
		var unbacked []string
		n := len(out)
		if out, unbacked, err = s.backed(ctx, caller.UserID, out, now); err != nil {
			return Tally{}, err
		}
		var msgs []string
		if len(far) > 0 {
			msgs = append(msgs, unrelatedMessage(tally.Unrelated, far, s.opts.TeachMargin))
		}
		if len(unbacked) > 0 {
			msgs = append(msgs, unbackedMessage(n-len(out), unbacked))
		}
		tally.Message = strings.Join(msgs, "; ")
	}
	tally.Learned, tally.Unbacked = len(out), len(events)-len(out)-tally.Unrelated
	if len(out) == 0 {
		return tally, nil
	}
	if err := s.record(ctx, out); err != nil {
		return Tally{}, err
	}
	return tally, nil
}

// backed returns the reports of userID that its observed runs back, in
// their order, and the tools of the others (each once, in order): per
// tool, each success claims one of the user's unclaimed successful runs
// of it within ReportWindow, then each failure one of its remaining runs
// (graph.RunClaims). A run claimed for a report whose write then fails is
// not given back: the store never learns more than it saw.
func (s *Service) backed(ctx context.Context, userID string, events []graph.UsageEvent, now time.Time) ([]graph.UsageEvent, []string, error) {
	type need struct{ ok, failed []int }
	byTool := map[string]*need{}
	var tools []string
	for i, e := range events {
		n := byTool[e.ToolID]
		if n == nil {
			n = &need{}
			byTool[e.ToolID] = n
			tools = append(tools, e.ToolID)
		}
		if e.Success {
			n.ok = append(n.ok, i)
		} else {
			n.failed = append(n.failed, i)
		}
	}
	keep := make([]bool, len(events))
	var unbacked []string
	since := now.Add(-ReportWindow)
	for _, id := range tools {
		n := byTool[id]
		short := false
		for _, group := range []struct {
			idx        []int
			successful bool
		}{{n.ok, true}, {n.failed, false}} {
			if len(group.idx) == 0 {
				continue
			}
			got, err := s.store.ClaimRuns(ctx, graph.RunClaim{UserID: userID, ToolID: id, Since: since, N: len(group.idx), Successful: group.successful})
			if err != nil {
				return nil, nil, fmt.Errorf("retrieval: back reports of %q: %w", id, err)
			}
			for _, i := range group.idx[:got] {
				keep[i] = true
			}
			short = short || got < len(group.idx)
		}
		if short {
			unbacked = append(unbacked, id)
		}
	}
	out := events[:0:0]
	for i, e := range events {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out, unbacked, nil
}

// ReportFloor is the similarity (cosine of the query's vector, through the
// promoted adapter, and the tool's) a success needs for its query to be
// learned from a use that is not an admin's import: the zero-shot
// decision's floor, under which the tool is no match for the query
// whatever else they share.
const ReportFloor = DefaultZeroShotFloor

// DefaultTeachMargin is Options.TeachMargin's default: how much less like
// a query its tool may be than the active tool most like it, for the
// query to be learned from a use that is not an admin's import
// (evaluation/TUNING.md, twenty-eighth round).
const DefaultTeachMargin = 0.15

// teaches is the one rule for what a success teaches, outside an admin's
// import: its query (unit embedding qv) is learned for the tool (vector
// tv) only when the query is like the tool (similarity at least
// ReportFloor) and the tool is among the catalogue's closest matches for
// it (no active tool more than TeachMargin more similar). A real run of a
// harmless tool cannot then carry a query into everyone's ranking that
// is about another tool ("the price of a hotel room in Tokyo" on a
// currency tool, while the hotel search is far closer). Similarities are
// read through the promoted adapter, as the semantic signal reads them.
func (s *Service) teaches(ctx context.Context, qv, tv []float32) (bool, error) {
	sv := s.model.Load().semanticVector(qv)
	sim := graph.Cosine(sv, tv)
	if sim < ReportFloor {
		return false, nil
	}
	if s.opts.TeachMargin < 0 {
		return true, nil
	}
	best, err := s.store.VectorSearch(ctx, sv, 1, graph.Filter{})
	if err != nil {
		return false, fmt.Errorf("retrieval: the tools most like a served query: %w", err)
	}
	return len(best) == 0 || best[0].Score-sim <= s.opts.TeachMargin, nil
}

// nearReports drops the successful reports whose query does not teach
// their tool (teaches), and returns the tools of those dropped (each
// once, in order). Reports without a query or a query vector, and
// failures, are kept: they teach nothing about which queries the tool
// serves.
func (s *Service) nearReports(ctx context.Context, events []graph.UsageEvent, toolVecs map[string][]float32) ([]graph.UsageEvent, []string, error) {
	var far []string
	out := events[:0:0]
	for _, e := range events {
		tv := toolVecs[e.ToolID]
		if e.Success && e.QueryEmbedding != nil && tv != nil {
			ok, err := s.teaches(ctx, e.QueryEmbedding, tv)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				if !slices.Contains(far, e.ToolID) {
					far = append(far, e.ToolID)
				}
				continue
			}
		}
		out = append(out, e)
	}
	return out, far, nil
}

// Teaches reports, for each event, whether its query would teach its tool
// when a signed-in user (not an admin's import) reports or runs it: a
// success with a query the tool is like, and no active tool far more
// like (teaches). Failures, events without a query and unknown tools
// teach nothing (false). `toolsmith eval --teach-rule` learns its history
// this way, to measure what the rule costs learning.
func (s *Service) Teaches(ctx context.Context, events []Event) ([]bool, error) {
	evs := make([]graph.UsageEvent, len(events))
	for i, e := range events {
		evs[i] = graph.UsageEvent{ToolID: strings.TrimSpace(e.ToolID), Query: strings.TrimSpace(e.Query), Success: e.Success}
	}
	if err := s.embedQueries(ctx, evs); err != nil {
		return nil, err
	}
	if err := s.keepTaught(ctx, evs); err != nil {
		return nil, err
	}
	out := make([]bool, len(evs))
	for i, e := range evs {
		out[i] = e.QueryEmbedding != nil
	}
	return out, nil
}

// unrelatedMessage tells a planner why n reports were not learned.
func unrelatedMessage(n int, tools []string, margin float64) string {
	rule := fmt.Sprintf("at least %.2f", ReportFloor)
	if margin >= 0 {
		rule += fmt.Sprintf(" and no tool of the catalogue is more than %.2f more similar to it", margin)
	}
	return fmt.Sprintf("%d reported use(s) not learned (not stored), as their query is not about the tool (%s): "+
		"a reported success teaches its query only when the query's similarity to the tool is %s",
		n, namedTools(tools), rule)
}

// unbackedMessage tells a planner why n reports were not learned.
func unbackedMessage(n int, tools []string) string {
	return fmt.Sprintf("%d reported use(s) not learned (not stored), as no run backs them (%s): "+
		"a report teaches the shared ranking only when the caller ran that tool through Toolsmith "+
		"(execute, a verb, MCP call_tool) within the last %g h, one report per run, and a reported success needs a successful run",
		n, namedTools(tools), ReportWindow.Hours())
}

// namedTools names the first three tools and counts the rest.
func namedTools(tools []string) string {
	named := tools
	if len(named) > 3 {
		named = named[:3]
	}
	more := ""
	if len(tools) > len(named) {
		more = fmt.Sprintf(" and %d more", len(tools)-len(named))
	}
	return strings.Join(named, ", ") + more
}

// RecordUsage is the learning path of the tool runs Toolsmith makes itself
// (activities.Modules records each execution through it, and so satisfies
// activities.UsageRecorder): what RecordEvents does, without the caller's
// checks, which the execution already passed. An event without an origin
// is graph.OriginObserved: it can back one report of its user. A run recorded this way
// teaches the ranking as a planner's event does: its query feeds the
// usage centroid, the neighbours and the query log, and its session's
// other recent tools pair with it. If the queries cannot be embedded, the
// events are still written, without embeddings, and the error says so.
//
// A run's query is its caller's words (a verb's text), so it teaches
// only when its caller may teach the shared learned data
// (access.MayTeach of the event's Level, the rule for reports and
// pairings): an anonymous caller's or a guest key's run is recorded
// without its query, and counts as a use of the tool (success rate,
// latency, popularity) but teaches no search. Otherwise anyone could
// carry a text into everyone's ranking by running a verb, which a
// guest's report may not. A signed-in caller's query is kept when it is
// about the tool (teaches, the rule a report's query meets; keepTaught).
func (s *Service) RecordUsage(ctx context.Context, events []graph.UsageEvent) error {
	if len(events) == 0 {
		return nil
	}
	now := s.opts.Now()
	out := make([]graph.UsageEvent, len(events))
	for i, e := range events {
		e.ToolID, e.Query = strings.TrimSpace(e.ToolID), strings.TrimSpace(e.Query)
		if !access.MayTeach(e.Level) {
			e.Query, e.QueryEmbedding = "", nil
		}
		if e.At.IsZero() {
			e.At = now
		}
		if e.Origin == "" {
			e.Origin = graph.OriginObserved
		}
		out[i] = e
	}
	embedErr := s.embedQueries(ctx, out)
	teachErr := s.keepTaught(ctx, out)
	if err := s.record(ctx, out); err != nil {
		return err
	}
	if embedErr != nil {
		return fmt.Errorf("retrieval: usage recorded without query embeddings: %w", embedErr)
	}
	if teachErr != nil {
		return fmt.Errorf("retrieval: usage recorded without the queries it could not check: %w", teachErr)
	}
	return nil
}

// keepTaught takes the query off each successful run whose query does not
// teach its tool (teaches), so the run counts as a use and teaches no
// search. A query that cannot be checked (the tool or the catalogue
// cannot be read) is taken off too, and the first such error returned.
func (s *Service) keepTaught(ctx context.Context, events []graph.UsageEvent) error {
	var first error
	vecs := map[string][]float32{}
	for i := range events {
		e := &events[i]
		if !e.Success || e.QueryEmbedding == nil {
			continue
		}
		tv, ok := vecs[e.ToolID]
		if !ok {
			t, err := s.store.GetTool(ctx, e.ToolID)
			if err != nil && !isNotFound(err) && first == nil {
				first = err
			}
			tv = t.Embedding
			vecs[e.ToolID] = tv
		}
		keep := false
		if tv != nil {
			var err error
			if keep, err = s.teaches(ctx, e.QueryEmbedding, tv); err != nil && first == nil {
				first = err
			}
		}
		if !keep {
			e.Query, e.QueryEmbedding = "", nil
		}
	}
	return first
}

// embedQueries gives each successful event with a query and no embedding
// its query's unit embedding: they feed the tools' usage centroids and the
// neighbours signal. A query searched lately (a verb's run searched its
// own text) comes from the query-embedding cache (cachedVectors).
func (s *Service) embedQueries(ctx context.Context, events []graph.UsageEvent) error {
	var texts []string
	var idx []int
	for i, e := range events {
		if e.Success && e.Query != "" && e.QueryEmbedding == nil {
			texts = append(texts, e.Query)
			idx = append(idx, i)
		}
	}
	if len(texts) == 0 {
		return nil
	}
	vecs, err := s.cachedVectors(ctx, texts, "event queries")
	if err != nil {
		return err
	}
	for j, i := range idx {
		events[i].QueryEmbedding = vecs[j]
	}
	return nil
}

// record writes events and learns from them: the memory reads them back
// from the store (as it reads everyone else's, so each counts once), the
// session pairings grow, and the result cache is cleared.
func (s *Service) record(ctx context.Context, out []graph.UsageEvent) error {
	if err := s.store.RecordUsage(ctx, out); err != nil {
		return fmt.Errorf("retrieval: record usage: %w", err)
	}
	if err := s.followMemory(ctx, true); err != nil {
		return err
	}
	if err := s.learnPairs(ctx, out); err != nil {
		return err
	}
	if s.cache != nil {
		s.cache.clear()
	}
	return nil
}

// PairWindow is how close in time two successful uses in one session must
// be to count as used together.
const PairWindow = 10 * time.Minute

// learnPairs strengthens the learned pairing of each new successful event's
// tool with the other tools its session used successfully within
// PairWindow before it (or at the same time). A session belongs to its
// caller: two uses pair only when both events carry the same user and
// session, and anonymous events (no user) never teach pairings, since
// anyone can name any session id. The store counts a pair once per
// caller's session and shows it only once graph.PairQuorum callers gave
// evidence of it (graph.Pairings). Only a caller who may teach the shared
// learned data (access.MayTeach of the event's Level, as for a report)
// teaches pairings: a guest's run is recorded but pairs nothing. The
// level read is the new use's (stores do not keep it); the session's
// earlier uses it pairs with are the same user's.
func (s *Service) learnPairs(ctx context.Context, events []graph.UsageEvent) error {
	type session struct{ user, id string }
	bySession := map[session][]graph.UsageEvent{}
	var sessions []session
	for _, e := range events {
		if !e.Success || e.SessionID == "" || e.UserID == "" || !access.MayTeach(e.Level) {
			continue
		}
		k := session{e.UserID, e.SessionID}
		if _, seen := bySession[k]; !seen {
			sessions = append(sessions, k)
		}
		bySession[k] = append(bySession[k], e)
	}
	var evidence []graph.PairEvidence
	histories := map[string][]graph.SessionEvent{}
	for _, k := range sessions {
		hist, ok := histories[k.id]
		if !ok {
			var err error
			if hist, err = s.store.SessionHistory(ctx, k.id, 50); err != nil {
				return fmt.Errorf("retrieval: learn pairings: %w", err)
			}
			histories[k.id] = hist
		}
		counted := map[[2]string]bool{}
		for _, e := range bySession[k] {
			for _, h := range hist {
				if !h.Success || h.UserID != k.user || h.ToolID == e.ToolID || h.At.After(e.At) || e.At.Sub(h.At) > PairWindow {
					continue
				}
				key := [2]string{min(e.ToolID, h.ToolID), max(e.ToolID, h.ToolID)}
				if counted[key] {
					continue
				}
				counted[key] = true
				evidence = append(evidence, graph.PairEvidence{A: key[0], B: key[1], At: e.At, Caller: k.user, Session: k.id})
			}
		}
	}
	if len(evidence) == 0 {
		return nil
	}
	if err := s.store.LearnPairs(ctx, evidence); err != nil {
		return fmt.Errorf("retrieval: learn pairings: %w", err)
	}
	return nil
}

func isNotFound(err error) bool {
	return errors.Is(err, fault.ErrNotFound)
}

// loadMemory fills the in-process usage memory (the neighbours' exemplars
// and their query log) from the store's latest served queries, once per
// Service; a failed load is retried on the next call. Every path that adds
// to the memory (followMemory) or reads it (ranking) calls it first.
func (s *Service) loadMemory(ctx context.Context) error {
	if s.memLoaded.Load() || s.exemplars == nil {
		return nil
	}
	s.memMu.Lock()
	defer s.memMu.Unlock()
	if s.memLoaded.Load() {
		return nil
	}
	qs, err := s.store.ServedQueries(ctx, s.opts.Exemplars)
	if err != nil {
		return fmt.Errorf("retrieval: load served queries: %w", err)
	}
	for i := len(qs) - 1; i >= 0; i-- { // oldest first, as they arrived
		s.remember(qs[i])
	}
	s.memRead.Store(s.opts.Now().UnixNano())
	s.memLoaded.Store(true)
	return nil
}

// followPage is how many served queries followMemory reads per statement.
const followPage = 1000

// followMemory adds to the usage memory the served queries written to the
// store since it last looked, by this process or another: a worker
// recording the tools its workflows ran, another API replica's events. A
// search calls it: it reads at most every FollowEvery and never waits for
// another search's read. Recording (record) forces a read after its write.
func (s *Service) followMemory(ctx context.Context, force bool) error {
	if s.exemplars == nil {
		return nil
	}
	if err := s.loadMemory(ctx); err != nil {
		return err
	}
	due := func() bool {
		return s.opts.Now().UnixNano()-s.memRead.Load() >= int64(s.opts.FollowEvery)
	}
	if force {
		s.memMu.Lock()
	} else if s.opts.FollowEvery < 0 || !due() || !s.memMu.TryLock() {
		return nil
	}
	defer s.memMu.Unlock()
	if !force && !due() { // another search read while this one waited for the lock
		return nil
	}
	added := 0
	for {
		qs, err := s.store.ServedQueriesAfter(ctx, s.memSeq, followPage)
		if err != nil {
			return fmt.Errorf("retrieval: follow served queries: %w", err)
		}
		for _, q := range qs {
			s.remember(q)
		}
		added += len(qs)
		if len(qs) < followPage {
			break
		}
	}
	s.memRead.Store(s.opts.Now().UnixNano())
	if added > 0 && s.cache != nil {
		s.cache.clear() // ranking evidence changed
	}
	return nil
}

// remember adds one served query to the memory; the caller holds memMu.
func (s *Service) remember(q graph.ServedQuery) {
	var vec []float32
	if q.Embedding != nil {
		vec = graph.Normalize(q.Embedding)
	}
	s.exemplars.add(q.ToolID, vec, q.Query)
	s.memSeq = max(s.memSeq, q.Seq)
}
