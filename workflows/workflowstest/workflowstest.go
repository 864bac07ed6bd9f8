// Package workflowstest holds the fakes workflow tests run the real activity
// structs against: an in-memory tool source built from the demo module
// manifests, a scripted searcher, the real module router in front of the
// demo modules on httptest, a scripted LLM and a gap log. The workflow unit
// tests, the history recorder and end-to-end tests share it.
package workflowstest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
)

// Fixture wires the real activity structs to fakes: an in-memory tool
// source built from the demo module manifests, a scripted searcher, the
// real router against the demo modules on httptest, and a scripted LLM.
type Fixture struct {
	Tools    map[string]graph.Tool
	Searcher *ScriptedSearcher
	Router   *modules.Router
	Mods     map[string]*demomodule.Module
	LLM      llms.Model
	Gaps     *GapLog
	Usage    *UsageLog
	// Routed is activities.Graph.Routed: nil treats every tool as
	// runnable; RouteOnly makes it the router's (modules.Router.Serves).
	Routed func(module, toolID string) bool
}

// RouteOnly makes the search mark candidates whose module the fixture's
// router does not route as unavailable, as a deployment's worker does.
func (f *Fixture) RouteOnly() {
	f.Routed = f.Router.Serves
}

// New starts the demo modules on httptest and returns a fixture over them.
// cfgEdit may change the module configuration (timeouts).
func New(t testing.TB, cfgEdit func(*modules.Config)) *Fixture {
	t.Helper()
	mux, mods := demomodule.Mux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cfg := modules.NewConfig()
	for _, n := range demomodule.Names() {
		if err := cfg.Add(n + "=" + srv.URL + "/" + n); err != nil {
			t.Fatal(err)
		}
	}
	if cfgEdit != nil {
		cfgEdit(&cfg)
	}
	f := &Fixture{Tools: map[string]graph.Tool{}, Searcher: &ScriptedSearcher{hits: map[string][]activities.SearchHit{}},
		Router: modules.NewRouter(cfg), Mods: mods, Gaps: &GapLog{}, Usage: &UsageLog{}}
	for _, m := range mods {
		for _, man := range m.Manifests() {
			f.AddTool(man)
		}
	}
	return f
}

// AddTool registers a manifest in the fixture's tool source.
func (f *Fixture) AddTool(m tool.Manifest) {
	raw, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	f.Tools[m.ToolID] = graph.Tool{ToolSummary: graph.ToolSummary{
		ID: m.ToolID, Verb: m.Verb, Name: m.Name, ShortDescription: m.ShortDescription, Module: m.Module,
		Groups: m.Groups, State: m.State, AvailableInStates: m.AvailableInStates, Status: graph.StatusActive,
	}, Manifest: raw}
}

// EditTool changes a registered tool's manifest.
func (f *Fixture) EditTool(id string, edit func(*tool.Manifest)) {
	var m tool.Manifest
	if err := json.Unmarshal(f.Tools[id].Manifest, &m); err != nil {
		panic(err)
	}
	edit(&m)
	f.AddTool(m)
}

// Hit makes the searcher answer query words (e.g. "convert currency") with
// the tool at that similarity.
func (f *Fixture) Hit(words, toolID string, sim float64) { f.ScoredHit(words, toolID, sim, sim) }

// ScoredHit is Hit with a hybrid score of its own (the substitution rule
// reads the lead of the first score over the second).
func (f *Fixture) ScoredHit(words, toolID string, sim, score float64) {
	t := f.Tools[toolID]
	f.Searcher.mu.Lock()
	defer f.Searcher.mu.Unlock()
	f.Searcher.hits[words] = append(f.Searcher.hits[words], activities.SearchHit{Tool: t.ToolSummary, Similarity: sim, Score: score})
}

// RankedHit is ScoredHit with the signals the decision model reads besides
// similarity and score (retrieval.Candidate's keyword and subword leads).
func (f *Fixture) RankedHit(words, toolID string, c retrieval.Candidate) {
	t := f.Tools[toolID]
	f.Searcher.mu.Lock()
	defer f.Searcher.mu.Unlock()
	f.Searcher.hits[words] = append(f.Searcher.hits[words], activities.SearchHit{Tool: t.ToolSummary,
		Similarity: c.Similarity, Score: c.Score, Keyword: c.Keyword, Subword: c.Subword, Learned: c.Learned,
		Record: c.Record, Recorded: c.Recorded})
}

// ClearHit makes the searcher answer query words with the tool as the
// hybrid ranking reports a clear match: close (similarity .9), far ahead on
// score (12) and on keywords (z-score 4), so that the default rule
// substitutes it.
func (f *Fixture) ClearHit(words, toolID string) {
	f.RankedHit(words, toolID, retrieval.Candidate{Similarity: 0.9, Score: 12, Keyword: 4})
}

// GetTool implements activities.ToolSource.
func (f *Fixture) GetTool(_ context.Context, id string) (graph.Tool, error) {
	t, ok := f.Tools[id]
	if !ok {
		return graph.Tool{}, fmt.Errorf("get %q: %w", id, fault.ErrNotFound)
	}
	return t, nil
}

// ScriptedSearcher answers queries from Fixture.Hit, filtered by the caller.
type ScriptedSearcher struct {
	mu   sync.Mutex
	hits map[string][]activities.SearchHit
}

// Search implements activities.Searcher.
func (s *ScriptedSearcher) Search(_ context.Context, req activities.SearchRequest) ([]activities.SearchHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	words, _, _ := strings.Cut(req.Query, ":")
	var out []activities.SearchHit
	for _, h := range s.hits[words] {
		if req.Caller.Allows(&h.Tool) {
			out = append(out, h)
		}
	}
	return out, nil
}

// GapLog records gaps in memory.
type GapLog struct {
	mu   sync.Mutex
	Gaps []activities.Gap
}

// RecordGap implements activities.GapRecorder.
func (g *GapLog) RecordGap(_ context.Context, gap activities.Gap) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Gaps = append(g.Gaps, gap)
	return nil
}

// UsageLog records usage events and pairing evidence in memory.
type UsageLog struct {
	mu     sync.Mutex
	Events []graph.UsageEvent
	Pairs  []graph.PairEvidence
}

// RecordUsage implements activities.UsageRecorder.
func (u *UsageLog) RecordUsage(_ context.Context, events []graph.UsageEvent) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.Events = append(u.Events, events...)
	return nil
}

// LearnPairs implements activities.PairLearner.
func (u *UsageLog) LearnPairs(_ context.Context, evidence []graph.PairEvidence) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.Pairs = append(u.Pairs, evidence...)
	return nil
}

// ScriptedLLM answers the decomposition prompt of each verb with a fixed
// text, the judge's prompt (llm.JudgePrompt) of each verb with its
// Judgements text, or with an answer that is no judgement when none is
// scripted (so the rule decides), and the build prompt (build.Prompt) of
// each verb with the next of its Builds answers, one per round.
type ScriptedLLM struct {
	mu         sync.Mutex
	Answers    map[string]string
	Judgements map[string]string
	// Builds holds each verb's build answers in round order; a round past
	// the last is an error, as a model that stopped answering.
	Builds map[string][]string
	Asked  []string
	Judged []string
	// Built lists the verbs of the build prompts asked, in order.
	Built []string
}

var (
	verbLine   = regexp.MustCompile(`(?m)^VERB: (\S+)$`)
	actionLine = regexp.MustCompile(`(?m)^ACTION: (\S+)$`)
	buildLine  = regexp.MustCompile(`(?m)^VERB TO BUILD: (\S+)$`)
)

// build answers a build prompt with the verb's next scripted answer, and
// reports its cost as a model does: a token per four characters of prompt
// and answer.
func (s *ScriptedLLM) build(verb, prompt string) (*llms.ContentResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.Built {
		if v == verb {
			n++
		}
	}
	s.Built = append(s.Built, verb)
	answers := s.Builds[verb]
	if n >= len(answers) {
		return nil, fmt.Errorf("scripted llm: no build answer %d for %s", n+1, verb)
	}
	a := answers[n]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: a,
		GenerationInfo: map[string]any{"TotalTokens": (len(prompt) + len(a)) / 4}}}}, nil
}

// GenerateContent implements llms.Model.
func (s *ScriptedLLM) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	var prompt strings.Builder
	for _, m := range msgs {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				prompt.WriteString(t.Text)
			}
		}
	}
	if m := actionLine.FindStringSubmatch(prompt.String()); m != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.Judged = append(s.Judged, m[1])
		a, ok := s.Judgements[m[1]]
		if !ok {
			a = "no judgement scripted"
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: a}}}, nil
	}
	if m := buildLine.FindStringSubmatch(prompt.String()); m != nil {
		return s.build(m[1], prompt.String())
	}
	m := verbLine.FindStringSubmatch(prompt.String())
	if m == nil {
		return nil, fmt.Errorf("scripted llm: no VERB line in prompt")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Asked = append(s.Asked, m[1])
	a, ok := s.Answers[m[1]]
	if !ok {
		return nil, fmt.Errorf("scripted llm: no answer for %s", m[1])
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: a}}}, nil
}

// Call implements llms.Model.
func (s *ScriptedLLM) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}

// Reset forgets every scripted search hit.
func (f *Fixture) Reset() {
	f.Searcher.mu.Lock()
	f.Searcher.hits = map[string][]activities.SearchHit{}
	f.Searcher.mu.Unlock()
}
