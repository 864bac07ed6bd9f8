package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Phase is a progressive-disclosure conversation phase.
type Phase string

// Phases. PhaseNone is a plain search: index, detailed manifests and
// pairings within the default budget.
const (
	PhaseNone            Phase = ""
	PhaseInitialPlanning Phase = "initial_planning"
	PhaseToolSelection   Phase = "tool_selection"
	PhaseExecutionPrep   Phase = "execution_prep"
	PhaseErrorRecovery   Phase = "error_recovery"
)

// ParsePhase reads a phase parameter.
func ParsePhase(s string) (Phase, error) {
	switch p := Phase(strings.ToLower(strings.TrimSpace(s))); p {
	case PhaseNone, PhaseInitialPlanning, PhaseToolSelection, PhaseExecutionPrep, PhaseErrorRecovery:
		return p, nil
	}
	return "", fault.Malformed("phase", "must be initial_planning, tool_selection, execution_prep or error_recovery; got %q", s)
}

// PhaseConfig is what a phase puts in the context and its token budget.
type PhaseConfig struct {
	IncludeIndex         bool `json:"includeLightweightIndex"`
	IncludeDetailed      bool `json:"includeDetailedManifests"`
	MaxTools             int  `json:"maxTools"`
	IncludeExamples      bool `json:"includeExamples"`
	IncludeRelationships bool `json:"includeRelationships"`
	IncludeErrorPatterns bool `json:"includeErrorPatterns"`
	IncludeAlternatives  bool `json:"includeAlternatives"`
	TokenBudget          int  `json:"tokenBudget"`
}

// PhaseConfigFor returns a phase's configuration; maxTools (the query's)
// caps the phase's own MaxTools, includeExamples applies to PhaseNone.
func PhaseConfigFor(p Phase, maxTools int, includeExamples bool) PhaseConfig {
	switch p {
	case PhaseInitialPlanning:
		return PhaseConfig{IncludeIndex: true, TokenBudget: 3000}
	case PhaseToolSelection:
		return PhaseConfig{IncludeIndex: true, IncludeDetailed: true, MaxTools: min(maxTools, 3), IncludeExamples: true, TokenBudget: 8000}
	case PhaseExecutionPrep:
		return PhaseConfig{IncludeDetailed: true, MaxTools: min(maxTools, 5), IncludeRelationships: true, TokenBudget: 4000}
	case PhaseErrorRecovery:
		return PhaseConfig{IncludeDetailed: true, MaxTools: min(maxTools, 3), IncludeErrorPatterns: true, IncludeAlternatives: true, TokenBudget: 5000}
	}
	return PhaseConfig{IncludeIndex: true, IncludeDetailed: true, MaxTools: maxTools, IncludeExamples: includeExamples, IncludeRelationships: true, TokenBudget: 16000}
}

// TokenEstimator names EstimateTokens' heuristic.
const TokenEstimator = "chars/4"

// EstimateTokens estimates the tokens of text as ⌈runes/4⌉, the usual rule
// of thumb for BPE tokenisers on English and JSON. langchaingo's
// llms.CountTokens needs tiktoken's BPE files, which it downloads on first
// use, so it cannot run offline.
func EstimateTokens(text string) int {
	return runeTokens(utf8.RuneCountInString(text))
}

// runeTokens is EstimateTokens of a text of n runes.
func runeTokens(n int) int { return (n + 3) / 4 }

// IndexEntry is one line of the lightweight index.
type IndexEntry struct {
	ToolID           string   `json:"toolId"`
	Verb             string   `json:"verb"`
	ShortDescription string   `json:"shortDescription"`
	Category         string   `json:"category"`
	Tags             []string `json:"tags"`
	RequiredParams   []string `json:"requiredParams"`
	OptionalParams   []string `json:"optionalParams"`
	Complexity       string   `json:"complexity,omitempty"`
}

// DetailedTool is a retrieved tool's full manifest with its examples,
// visible relationships and, in error recovery, its error patterns.
type DetailedTool struct {
	ToolID        string         `json:"toolId"`
	Manifest      map[string]any `json:"manifest"`
	Examples      []any          `json:"examples"`
	Relationships map[string]any `json:"relationships,omitempty"`
	CommonErrors  []any          `json:"commonErrors,omitempty"`
}

// AssembledTools is the context handed to the LLM.
type AssembledTools struct {
	Config PhaseConfig `json:"config"`
	// Index is the lightweight index: ranked tools first, then the rest of
	// the visible catalogue by id, as far as the budget allows.
	Index      []IndexEntry   `json:"lightweightIndex"`
	IndexTotal int            `json:"indexTotal"`
	Detailed   []DetailedTool `json:"detailedTools"`
	total      int
	// The Markdown of each Index and Detailed entry, rendered once while
	// assembling (budgeting needs them) and reused by Markdown.
	indexMD, detailedMD []string
}

// catalogue is a caller's visible tool list, in id order, with the
// estimated tokens of all their manifests (the "send everything"
// baseline). A cached catalogue is never modified (searches read it
// concurrently); a change makes a new one.
type catalogue struct {
	tools  []catEntry
	tokens int
	// seq is the position in the service's change log the catalogue
	// reflects: the changes after it are still to be applied.
	seq uint64
}

// catEntry is one visible tool with its manifest's estimated tokens, kept
// so that a change can take the tool's old share out of the total. Only
// the id is kept of the tool (at 100,000 tools their summaries were 85 MB
// per cached catalogue): the lightweight index reads the summaries of the
// few it shows (indexSummaries).
type catEntry struct {
	id     string
	tokens int
}

// maxCatChanges bounds the change log: a catalogue older than the log's
// start is listed again from the store.
const maxCatChanges = 4096

// inCatalogue is the store listing's test (an active tool, in the
// category if one is given) and the caller's visibility, in memory, so
// that a changed tool can be placed without listing the catalogue again.
func inCatalogue(t *graph.ToolSummary, caller access.Caller, category string) bool {
	return t.Status == graph.StatusActive && (category == "" || t.Category == category) && caller.Allows(t)
}

// catalogue returns caller's visible catalogue. It is listed from the
// store once per caller and category; after a tool change (Invalidate)
// only the changed tools are read again and placed in or taken out of the
// cached list, so the first search after a registration does not re-list
// the whole catalogue.
func (s *Service) catalogue(ctx context.Context, caller access.Caller, category string) (catalogue, error) {
	key := caller.Hash() + "|" + category
	s.tokMu.Lock()
	if s.catalogues == nil {
		s.catalogues = newLRU[catalogue](64)
	}
	cat, ok := s.catalogues.get(key)
	seq := s.catBase + uint64(len(s.catLog))
	var changed []string
	if ok && cat.seq < seq {
		if cat.seq < s.catBase {
			ok = false // older than the log: list again
		} else {
			changed = slices.Clone(s.catLog[cat.seq-s.catBase:])
		}
	}
	s.tokMu.Unlock()
	if ok && len(changed) == 0 {
		return cat, nil
	}
	var err error
	if ok {
		cat, err = s.applyChanges(ctx, cat, caller, category, changed)
	} else {
		cat, err = s.listCatalogue(ctx, caller, category)
	}
	if err != nil {
		return catalogue{}, err
	}
	// seq was read before the store: a change after it is applied again
	// on the next call, which is harmless (a change re-reads the tool's
	// current state).
	cat.seq = seq
	s.tokMu.Lock()
	if old, ok := s.catalogues.get(key); !ok || old.seq <= seq {
		s.catalogues.put(key, cat)
	}
	s.tokMu.Unlock()
	return cat, nil
}

// listCatalogue lists caller's visible catalogue from the store. When
// many of its tools have no memoised token estimate (the first listing
// after a start), the estimates of every tool are read in one bulk read
// (fillTokens) rather than one manifest at a time.
func (s *Service) listCatalogue(ctx context.Context, caller access.Caller, category string) (catalogue, error) {
	var cat catalogue
	f := caller.Filter()
	if category != "" {
		f.Categories = []string{category}
	}
	after := ""
	for {
		page, err := s.store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000, Filter: f})
		if err != nil {
			return catalogue{}, fmt.Errorf("retrieval: list tools: %w", err)
		}
		for i := range page.Items {
			if t := &page.Items[i]; caller.Allows(t) {
				cat.tools = append(cat.tools, catEntry{id: t.ID})
			}
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	if s.missingTokens(cat.tools) >= max(bulkTokensMin, len(cat.tools)/bulkTokensShare) {
		if err := s.fillTokens(ctx); err != nil {
			return catalogue{}, err
		}
	}
	for i := range cat.tools {
		n, err := s.manifestTokens(ctx, cat.tools[i].id)
		if err != nil {
			return catalogue{}, err
		}
		cat.tools[i].tokens = n
		cat.tokens += n
	}
	return cat, nil
}

// A listing reads every tool's manifest size in one bulk read when at
// least max(bulkTokensMin, 1/bulkTokensShare of its tools) lack an
// estimate: a bulk read costs a little per tool of the store, a single
// read (a whole record and its vector, decoded) many times that.
const (
	bulkTokensMin   = 64
	bulkTokensShare = 16
)

// missingTokens counts the entries without a memoised estimate.
func (s *Service) missingTokens(es []catEntry) int {
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	n := 0
	for _, e := range es {
		if _, ok := s.tokens[e.id]; !ok {
			n++
		}
	}
	return n
}

// fillTokens memoises the token estimate of every tool from one bulk read
// of the manifests' sizes (graph.Store.ManifestRunes): ⌈runes/4⌉, as
// EstimateTokens counts. One fill runs at a time; the warm-up and a first
// search that meet wait for one read. A tool changed (Invalidate) while
// the read ran is left out, to be read alone, as is every tool if more
// changes came than the change log keeps.
func (s *Service) fillTokens(ctx context.Context) error {
	s.tokFill.Lock()
	defer s.tokFill.Unlock()
	s.tokMu.Lock()
	since := s.catBase + uint64(len(s.catLog))
	filled := s.tokFilled == since+1
	s.tokMu.Unlock()
	if filled {
		return nil // another caller just filled it, and nothing changed since
	}
	runes, err := s.store.ManifestRunes(ctx)
	if err != nil {
		return fmt.Errorf("retrieval: manifest sizes: %w", err)
	}
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	if since < s.catBase {
		return nil
	}
	for _, id := range s.catLog[since-s.catBase:] {
		delete(runes, id)
	}
	for id, n := range runes {
		if _, ok := s.tokens[id]; !ok {
			s.tokens[id] = runeTokens(n)
		}
	}
	s.tokFilled = since + 1
	return nil
}

// applyChanges returns cat with the changed tools re-read: each leaves the
// list and, when caller still sees it, goes back at its id's place with
// its current manifest's tokens. A tool the store no longer has just
// leaves. One merge pass, so a burst of changes (an onboarding) costs one
// copy of the list, not one per change.
func (s *Service) applyChanges(ctx context.Context, cat catalogue, caller access.Caller, category string, changed []string) (catalogue, error) {
	slices.Sort(changed)
	changed = slices.Compact(changed)
	var add []catEntry // in id order, as changed is
	for _, id := range changed {
		t, err := s.store.GetTool(ctx, id)
		if errors.Is(err, fault.ErrNotFound) {
			continue
		}
		if err != nil {
			return catalogue{}, fmt.Errorf("retrieval: catalogue change %q: %w", id, err)
		}
		if inCatalogue(&t.ToolSummary, caller, category) {
			add = append(add, catEntry{id: t.ID, tokens: EstimateTokens(string(t.Manifest))})
		}
	}
	out := catalogue{tools: make([]catEntry, 0, len(cat.tools)+len(add))}
	c := 0 // next of changed not yet passed
	for _, e := range cat.tools {
		for c < len(changed) && changed[c] < e.id {
			c++
		}
		for len(add) > 0 && add[0].id < e.id {
			out.tools = append(out.tools, add[0])
			out.tokens += add[0].tokens
			add = add[1:]
		}
		if c < len(changed) && changed[c] == e.id {
			continue // replaced by its entry in add, if it has one
		}
		out.tools = append(out.tools, e)
		out.tokens += e.tokens
	}
	for _, e := range add {
		out.tools = append(out.tools, e)
		out.tokens += e.tokens
	}
	return out, nil
}

// WarmCatalogue fills the manifest token estimates of every tool caller
// sees, so that the first search after a start does not read every
// manifest (at 100,000 tools that is a minute on a busy machine); the
// estimates are shared by all callers and kept until a tool changes, and
// a change updates only that tool. The server runs it in the background
// once ready.
func (s *Service) WarmCatalogue(ctx context.Context, caller access.Caller) error {
	_, err := s.catalogue(ctx, caller, "")
	return err
}

// manifestTokens is the estimated size of a tool's manifest, memoised until
// the tool changes.
func (s *Service) manifestTokens(ctx context.Context, id string) (int, error) {
	s.tokMu.Lock()
	n, ok := s.tokens[id]
	s.tokMu.Unlock()
	if ok {
		return n, nil
	}
	t, err := s.store.GetTool(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("retrieval: manifest tokens %q: %w", id, err)
	}
	n = EstimateTokens(string(t.Manifest))
	s.tokMu.Lock()
	s.tokens[id] = n
	s.tokMu.Unlock()
	return n, nil
}

func indexEntry(t graph.ToolSummary) IndexEntry {
	return IndexEntry{ToolID: t.ID, Verb: t.Verb, ShortDescription: t.ShortDescription, Category: t.Category,
		Tags: nonNil(t.Tags), RequiredParams: nonNil(t.RequiredParams), OptionalParams: nonNil(t.OptionalParams), Complexity: t.Complexity}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// indexChunk is how many catalogue tools the lightweight index reads
// first (about what a plain search's budget shows beside its detailed
// manifests); each further read takes twice as many.
const indexChunk = 64

// indexSummaries returns the summaries of a run of catalogue entries, in
// their (id) order, from the store's id lookup (the SQLite store answers
// it from memory). A tool that changed since the catalogue was made is
// read as it is now and, if the caller no longer sees it, left out; the
// change is applied to the catalogue on its next use.
func (s *Service) indexSummaries(ctx context.Context, entries []catEntry, caller access.Caller) ([]graph.ToolSummary, error) {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.id
	}
	f := caller.Filter()
	f.IDs = ids
	page, err := s.store.ListTools(ctx, graph.ListQuery{Limit: len(ids), Filter: f})
	if err != nil {
		return nil, fmt.Errorf("retrieval: index summaries: %w", err)
	}
	return page.Items, nil
}

// assemble fills res.Context and the token metadata for the phase.
func (s *Service) assemble(ctx context.Context, q Query, cfg PhaseConfig, res *Result) error {
	cat, err := s.catalogue(ctx, q.Caller, q.Category)
	if err != nil {
		return err
	}
	a := AssembledTools{Config: cfg, Index: []IndexEntry{}, Detailed: []DetailedTool{}, total: len(cat.tools)}
	budget := cfg.TokenBudget
	used := EstimateTokens(markdownHeader(len(cat.tools)))
	if cfg.IncludeDetailed {
		detailBudget := budget
		if cfg.IncludeIndex {
			detailBudget = budget * 2 / 3
		}
		for i, h := range res.Hits {
			if i >= cfg.MaxTools {
				break
			}
			t, err := s.store.GetTool(ctx, h.Tool.ID)
			if err != nil {
				return fmt.Errorf("retrieval: assemble %q: %w", h.Tool.ID, err)
			}
			d, err := s.detailed(ctx, t, cfg, q.Caller)
			if err != nil {
				return err
			}
			md := renderDetailed(d)
			n := EstimateTokens(md)
			if len(a.Detailed) > 0 && used+n > detailBudget {
				break
			}
			used += n
			a.Detailed = append(a.Detailed, d)
			a.detailedMD = append(a.detailedMD, md)
		}
	}
	if cfg.IncludeIndex {
		seen := map[string]bool{}
		addEntry := func(t graph.ToolSummary) bool {
			if seen[t.ID] {
				return true
			}
			e := indexEntry(t)
			md := renderIndexEntry(e)
			n := EstimateTokens(md)
			if used+n > budget {
				return false
			}
			seen[t.ID] = true
			used += n
			a.Index = append(a.Index, e)
			a.indexMD = append(a.indexMD, md)
			return true
		}
		full := true
		for _, h := range res.Hits {
			if full = addEntry(h.Tool); !full {
				break
			}
		}
		for lo, n := 0, indexChunk; full && lo < len(cat.tools); lo, n = lo+n, min(2*n, graph.MaxListLimit) {
			sums, err := s.indexSummaries(ctx, cat.tools[lo:min(lo+n, len(cat.tools))], q.Caller)
			if err != nil {
				return err
			}
			for i := 0; full && i < len(sums); i++ {
				full = addEntry(sums[i])
			}
		}
	}
	a.IndexTotal = len(cat.tools)
	res.Context = a
	used = EstimateTokens(a.Markdown())
	res.Metadata.TotalToolsAvailable = len(cat.tools)
	res.Metadata.TokensUsed = used
	res.Metadata.TokensAllManifests = cat.tokens
	res.Metadata.TokenBudget = budget
	res.Metadata.TokenEstimator = TokenEstimator
	if cat.tokens > 0 {
		res.Metadata.TokenReduction = 1 - float64(used)/float64(cat.tokens)
	}
	return nil
}

// manifestMap decodes a manifest for display, without its relationships
// block (which may name tools the caller cannot see; visible relationships
// are reported separately) and without examples (reported separately).
func manifestMap(t graph.Tool) map[string]any {
	m := map[string]any{}
	if len(t.Manifest) > 0 {
		if err := json.Unmarshal(t.Manifest, &m); err != nil {
			m = map[string]any{}
		}
	}
	delete(m, "relationships")
	delete(m, "examples")
	return m
}

func rawList(t graph.Tool, field string) []any {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t.Manifest, &m); err != nil {
		return []any{}
	}
	var out []any
	if err := json.Unmarshal(m[field], &out); err != nil || out == nil {
		return []any{}
	}
	return out
}

// visibleRelations lists the caller-visible tools related to t by kind.
func (s *Service) visibleRelations(ctx context.Context, t graph.Tool, kind graph.RelKind, caller access.Caller) ([]map[string]any, error) {
	out := []map[string]any{}
	if kind == graph.RelPairsWith {
		// Declared pairings and learned ones (tools used together).
		hits, err := s.pairings(ctx, t.ID, MaxRelated, caller.Filter())
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			if !caller.Allows(&h.Tool) {
				continue
			}
			e := map[string]any{"toolId": h.Tool.ID, "shortDescription": h.Tool.ShortDescription, "cooccurrenceScore": h.Score, "source": h.Source}
			for _, r := range t.Relations {
				if r.Kind == kind && r.Target == h.Tool.ID && r.Sequence != "" {
					e["typicalSequence"] = r.Sequence
				}
			}
			out = append(out, e)
		}
		return out, nil
	}
	if kind != graph.RelAlternative && !slices.ContainsFunc(t.Relations, func(r graph.Relation) bool { return r.Kind == kind }) {
		// DEPENDS_ON edges are outgoing, all listed in t.Relations: no edge
		// of the kind, no query. ALTERNATIVE_TO is symmetric, so incoming
		// edges need the store.
		return out, nil
	}
	hits, err := s.store.Related(ctx, t.ID, kind, MaxRelated, caller.Filter())
	if err != nil {
		return nil, fmt.Errorf("retrieval: related %q: %w", t.ID, err)
	}
	for _, h := range hits {
		if !caller.Allows(&h.Tool) {
			continue
		}
		out = append(out, map[string]any{"toolId": h.Tool.ID, "shortDescription": h.Tool.ShortDescription})
	}
	return out, nil
}

func (s *Service) detailed(ctx context.Context, t graph.Tool, cfg PhaseConfig, caller access.Caller) (DetailedTool, error) {
	d := DetailedTool{ToolID: t.ID, Manifest: manifestMap(t), Examples: []any{}}
	if cfg.IncludeExamples {
		d.Examples = rawList(t, "examples")
	}
	if cfg.IncludeRelationships || cfg.IncludeAlternatives {
		d.Relationships = map[string]any{}
		kinds := map[string]graph.RelKind{}
		if cfg.IncludeRelationships {
			kinds["commonPairings"] = graph.RelPairsWith
			kinds["dependencies"] = graph.RelDependsOn
		}
		if cfg.IncludeAlternatives {
			kinds["alternatives"] = graph.RelAlternative
		}
		for name, kind := range kinds {
			rel, err := s.visibleRelations(ctx, t, kind, caller)
			if err != nil {
				return DetailedTool{}, err
			}
			d.Relationships[name] = rel
		}
	}
	if cfg.IncludeErrorPatterns {
		d.CommonErrors = rawList(t, "commonErrors")
	} else {
		delete(d.Manifest, "commonErrors")
	}
	return d, nil
}

func manifestView(t graph.Tool, examples bool) ManifestView {
	mv := ManifestView{ToolID: t.ID, Summary: t.ToolSummary, Manifest: manifestMap(t), Examples: []any{}}
	if examples {
		mv.Examples = rawList(t, "examples")
	}
	return mv
}

func markdownHeader(total int) string {
	return fmt.Sprintf("# Available Tools (Lightweight Index)\nTotal Tools: %d\n\n", total)
}

func renderIndexEntry(e IndexEntry) string {
	var b strings.Builder
	b.Grow(128 + len(e.ShortDescription))
	for _, part := range []string{"- **", e.ToolID, "** (", e.Verb, "): ", e.ShortDescription, "\n  Categories: ", e.Category, " | Tags: "} {
		b.WriteString(part)
	}
	join := func(xs []string) {
		for i, x := range xs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(x)
		}
	}
	join(e.Tags)
	b.WriteString("\n  Required: ")
	join(e.RequiredParams)
	b.WriteString(" | Optional: ")
	join(e.OptionalParams)
	b.WriteString("\n")
	return b.String()
}

func renderDetailed(d DetailedTool) string {
	var b strings.Builder
	b.WriteString("## " + d.ToolID + "\n")
	js, _ := json.MarshalIndent(d.Manifest, "", "  ")
	b.WriteString("```json\n" + string(js) + "\n```\n")
	if len(d.Examples) > 0 {
		js, _ := json.MarshalIndent(d.Examples, "", "  ")
		b.WriteString("\n### Usage Examples\n```json\n" + string(js) + "\n```\n")
	}
	if len(d.Relationships) > 0 {
		b.WriteString("\n### Common Patterns\n")
		for _, name := range []string{"commonPairings", "dependencies", "alternatives"} {
			rel, ok := d.Relationships[name].([]map[string]any)
			if !ok || len(rel) == 0 {
				continue
			}
			for _, r := range rel {
				line := fmt.Sprintf("- %s: %v", name, r["toolId"])
				if seq, ok := r["typicalSequence"]; ok {
					line += fmt.Sprintf(" (%v)", seq)
				}
				b.WriteString(line + "\n")
			}
		}
	}
	if len(d.CommonErrors) > 0 {
		js, _ := json.MarshalIndent(d.CommonErrors, "", "  ")
		b.WriteString("\n### Common Errors\n```json\n" + string(js) + "\n```\n")
	}
	return b.String()
}

// Markdown renders the context as Markdown for an LLM planner.
func (a AssembledTools) Markdown() string {
	var b strings.Builder
	if a.Config.IncludeIndex {
		b.WriteString(markdownHeader(a.total))
		if len(a.Index) < a.total {
			fmt.Fprintf(&b, "(showing %d of %d within the token budget; ranked tools first)\n\n", len(a.Index), a.total)
		}
		for i, e := range a.Index {
			if len(a.indexMD) == len(a.Index) {
				b.WriteString(a.indexMD[i])
			} else {
				b.WriteString(renderIndexEntry(e))
			}
		}
		b.WriteString("\n---\n\n")
	}
	if a.Config.IncludeDetailed {
		b.WriteString("# Detailed Tool Manifests (Retrieved for this query)\n")
		fmt.Fprintf(&b, "Retrieved %d relevant tools:\n\n", len(a.Detailed))
		for i, d := range a.Detailed {
			if len(a.detailedMD) == len(a.Detailed) {
				b.WriteString(a.detailedMD[i])
			} else {
				b.WriteString(renderDetailed(d))
			}
			b.WriteString("\n")
		}
		b.WriteString("---\n")
	}
	return b.String()
}

// OpenAIFunction is one tool in OpenAI function-calling format.
type OpenAIFunction struct {
	Type     string         `json:"type"`
	Function OpenAIFuncSpec `json:"function"`
}

// OpenAIFuncSpec is the function part of OpenAIFunction.
type OpenAIFuncSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// OpenAINames maps the function names of OpenAI back to the detailed
// tools' ids, so a planner's call finds its tool.
func (a AssembledTools) OpenAINames() map[string]string {
	out := make(map[string]string, len(a.Detailed))
	for _, d := range a.Detailed {
		out[tool.FunctionName(d.ToolID)] = d.ToolID
	}
	return out
}

// OpenAI renders the detailed tools as OpenAI function-calling definitions:
// the tool id's function name as name (tool.FunctionName: OpenAI allows
// only letters, digits, '_' and '-', at most 64), the description, and the
// input schema as parameters (an empty object schema when the tool has
// none). OpenAINames maps the names back to tool ids.
func (a AssembledTools) OpenAI() []OpenAIFunction {
	out := make([]OpenAIFunction, 0, len(a.Detailed))
	for _, d := range a.Detailed {
		desc, _ := d.Manifest["description"].(string)
		params := json.RawMessage(`{"type":"object","properties":{},"required":[]}`)
		if schema, ok := d.Manifest["inputSchema"]; ok && schema != nil {
			if js, err := json.Marshal(schema); err == nil {
				params = js
			}
		}
		out = append(out, OpenAIFunction{Type: "function", Function: OpenAIFuncSpec{Name: tool.FunctionName(d.ToolID), Description: desc, Parameters: params}})
	}
	return out
}
