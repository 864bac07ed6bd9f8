package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/tool"
)

// Graph holds the activities that read the knowledge graph.
type Graph struct {
	Searcher Searcher
	// Gaps records capability gaps; nil logs them only.
	Gaps GapRecorder
	// Routed reports whether this deployment can run a tool of a module
	// (the module router's table, and the tools the module's manifest
	// lists once discovered: modules.Router.Serves): a candidate it cannot
	// run is Unavailable. nil treats every tool as runnable.
	Routed func(module, toolID string) bool
	// Schemas, when set, is where SearchTools reads the candidates' input
	// schemas for the JSON types of their required parameters
	// (SearchInput.ParamTypes). nil, or a tool it cannot read, leaves a
	// candidate's types unknown: its inputs fit by their names alone.
	Schemas ToolSource
}

// Candidate is a tool found for a verb, as small as the workflow needs.
type Candidate struct {
	ToolID      string   `json:"toolId"`
	Verb        string   `json:"verb"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Module      string   `json:"module,omitempty"`
	Similarity  float64  `json:"similarity"`
	Score       float64  `json:"score"`
	Keyword     float64  `json:"keyword,omitempty"`
	Subword     float64  `json:"subword,omitempty"`
	Learned     float64  `json:"learned,omitempty"`
	Record      float64  `json:"record,omitempty"`
	Recorded    bool     `json:"recorded,omitempty"`
	Required    []string `json:"required,omitempty"`
	Optional    []string `json:"optional,omitempty"`
	// RequiredTypes are the JSON types the tool's input schema gives its
	// required parameters, by name ("amount": ["number"]); a parameter
	// whose schema names no plain JSON type is left out. Set only when the
	// search asked for them (SearchInput.ParamTypes).
	RequiredTypes map[string][]string `json:"requiredTypes,omitempty"`
	// Unavailable says this deployment cannot run the tool: its module is
	// not routed here (Graph.Routed).
	Unavailable bool `json:"unavailable,omitempty"`
}

// SearchInput asks for candidate tools for a verb.
type SearchInput struct {
	Verb        string        `json:"verb"`
	Description string        `json:"description,omitempty"`
	Context     string        `json:"context,omitempty"`
	Caller      access.Caller `json:"caller"`
	Limit       int           `json:"limit,omitempty"`
	// ParamTypes asks for the candidates' RequiredTypes: the verb brings
	// inputs whose values the decision reads. Without it the search reads
	// no manifest.
	ParamTypes bool `json:"paramTypes,omitempty"`
}

// SearchOutput lists candidates, best first: by Score (the hybrid ranking),
// highest first.
type SearchOutput struct {
	Query      string      `json:"query"`
	Candidates []Candidate `json:"candidates"`
}

// SearchTools finds the tools the caller can use for a verb. Store or
// embedder failures are returned as they are: transient, so retried.
func (g *Graph) SearchTools(ctx context.Context, in SearchInput) (SearchOutput, error) {
	if g.Searcher == nil {
		return SearchOutput{}, Fail(ErrTypeInvalidInput, "activities: no searcher configured")
	}
	q := VerbQuery(in.Verb, in.Description)
	hits, err := g.Searcher.Search(ctx, SearchRequest{Query: q, Context: in.Context, Caller: in.Caller, Limit: in.Limit})
	if err != nil {
		return SearchOutput{}, fmt.Errorf("activities: search tools for %s: %w", in.Verb, err)
	}
	out := SearchOutput{Query: q, Candidates: make([]Candidate, 0, len(hits))}
	for _, h := range hits {
		out.Candidates = append(out.Candidates, Candidate{
			ToolID: h.Tool.ID, Verb: h.Tool.Verb, Name: h.Tool.Name, Description: h.Tool.ShortDescription,
			Module: h.Tool.Module, Similarity: h.Similarity, Score: h.Score, Keyword: h.Keyword, Subword: h.Subword, Learned: h.Learned,
			Record: h.Record, Recorded: h.Recorded,
			Required: h.Tool.RequiredParams, Optional: h.Tool.OptionalParams,
			Unavailable: h.Tool.Module != "" && g.Routed != nil && !g.Routed(h.Tool.Module, h.Tool.ID),
		})
		if c := &out.Candidates[len(out.Candidates)-1]; c.Module == "" && g.Routed != nil {
			c.Unavailable = !g.moduleLessRunnable(ctx, c.ToolID)
		}
	}
	// The searcher ranks by score already; the stable sort makes the order
	// a promise of this activity (the workflow reports it as its scores).
	slices.SortStableFunc(out.Candidates, func(a, b Candidate) int { return cmp.Compare(b.Score, a.Score) })
	if in.ParamTypes && g.Schemas != nil {
		for i := range out.Candidates {
			out.Candidates[i].RequiredTypes = g.requiredTypes(ctx, out.Candidates[i].ToolID)
		}
	}
	return out, nil
}

// requiredTypes reads a tool's required parameters' JSON types from its
// manifest. The types only sharpen the decision, so a tool the source
// cannot read (gone since the search, a store error) is logged and has
// none rather than failing the search: its inputs fit by name, as before.
// moduleLessRunnable reports whether this deployment can run a tool whose
// manifest names no module, as ExecuteTool would run it: an onboarded
// wrapper or a tool built from scratch (its manifest's source origin)
// runs through the wrapper runtime, so it counts as runnable here (the
// runtime checks its approval); any other such tool runs on the module
// of its id's namespace (lang.translate on "lang"), which the deployment
// must route (Routed), and a tool whose id has no namespace cannot run
// at all. A tool whose manifest cannot be read (no Schemas, or an error)
// is left runnable, as before this check: the execution says why.
func (g *Graph) moduleLessRunnable(ctx context.Context, id string) bool {
	if g.Schemas == nil {
		return true
	}
	t, err := g.Schemas.GetTool(ctx, id)
	if err != nil {
		activity.GetLogger(ctx).Warn("runnable_unread", "tool", id, "error", err)
		return true
	}
	var m struct {
		Source *tool.Source `json:"source"`
	}
	if err := json.Unmarshal(t.Manifest, &m); err != nil {
		activity.GetLogger(ctx).Warn("runnable_unread", "tool", id, "error", err)
		return true
	}
	if m.Source != nil && (m.Source.Origin == "openapi" || m.Source.Origin == OriginBuilt) {
		return true
	}
	ns, _, ok := modules.Split(id)
	return ok && g.Routed(ns, id)
}

func (g *Graph) requiredTypes(ctx context.Context, id string) map[string][]string {
	t, err := g.Schemas.GetTool(ctx, id)
	if err != nil {
		activity.GetLogger(ctx).Warn("param_types_unread", "tool", id, "error", err)
		return nil
	}
	var m struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(t.Manifest, &m); err != nil {
		activity.GetLogger(ctx).Warn("param_types_unread", "tool", id, "error", err)
		return nil
	}
	return tool.RequiredTypes(m.InputSchema)
}

// Gap is a verb Toolsmith could not fulfil: the input to find-or-build.
type Gap struct {
	Verb        string  `json:"verb"`
	Description string  `json:"description,omitempty"`
	Context     string  `json:"context,omitempty"`
	UserID      string  `json:"userId,omitempty"`
	BestToolID  string  `json:"bestToolId,omitempty"`
	BestScore   float64 `json:"bestScore"`
	// Closest are the best candidates the search found (at most 5), with
	// their similarity.
	Closest    []GapCandidate `json:"closest,omitempty"`
	Reason     string         `json:"reason"`
	WorkflowID string         `json:"workflowId"`
	RunID      string         `json:"runId"`
	At         time.Time      `json:"at"`
}

// MaxGapClosest is how many closest tools a gap keeps.
const MaxGapClosest = graph.MaxGapClosest

// GapCandidate is one of a gap's closest tools, as the workflow passes it
// (its own type, not the store's record, so a change to the store's
// record does not change workflow histories).
type GapCandidate struct {
	ToolID string  `json:"toolId"`
	Score  float64 `json:"score"`
}

// GapRecorder stores capability gaps (the airlock reads them later).
type GapRecorder interface {
	RecordGap(ctx context.Context, g Gap) error
}

// GapOutput says where a gap went.
type GapOutput struct {
	Recorded bool   `json:"recorded"`
	Where    string `json:"where"` // "store" or "log"
}

// StoreGaps records gaps as (Gap) nodes of the graph store: each
// unfulfilled run counts on its verb's gap, with the closest tools and the
// catalogue entities the request mentions.
type StoreGaps struct {
	Store graph.Gaps
	// Entities, when set, names the catalogue entities a text mentions.
	Entities func(ctx context.Context, text string) ([]string, error)
}

// RecordGap implements GapRecorder.
func (s StoreGaps) RecordGap(ctx context.Context, g Gap) error {
	e := graph.GapEvent{Verb: g.Verb, Description: g.Description, At: g.At, Reason: g.Reason}
	for _, c := range g.Closest {
		e.Closest = append(e.Closest, graph.GapCandidate{ToolID: c.ToolID, Score: c.Score})
	}
	if e.Closest == nil && g.BestToolID != "" {
		e.Closest = []graph.GapCandidate{{ToolID: g.BestToolID, Score: g.BestScore}}
	}
	if s.Entities != nil {
		text := strings.TrimSpace(VerbQuery(g.Verb, g.Description) + " " + g.Context)
		ents, err := s.Entities(ctx, text)
		if err != nil {
			return fmt.Errorf("entities of gap %s: %w", g.Verb, err)
		}
		e.Entities = ents
	}
	_, err := s.Store.RecordGap(ctx, e)
	return err
}

// RecordCapabilityGap records that a verb could not be fulfilled. The gap is
// always logged; with a GapRecorder it is also stored (a store failure is
// returned and retried).
func (g *Graph) RecordCapabilityGap(ctx context.Context, gap Gap) (GapOutput, error) {
	info := activity.GetInfo(ctx)
	gap.WorkflowID, gap.RunID = info.WorkflowExecution.ID, info.WorkflowExecution.RunID
	if gap.At.IsZero() {
		gap.At = time.Now().UTC()
	}
	activity.GetLogger(ctx).Info("capability_gap", "verb", gap.Verb, "reason", gap.Reason,
		"bestTool", gap.BestToolID, "bestScore", gap.BestScore, "workflowId", gap.WorkflowID)
	if g.Gaps == nil {
		return GapOutput{Recorded: true, Where: "log"}, nil
	}
	if err := g.Gaps.RecordGap(ctx, gap); err != nil {
		return GapOutput{}, fmt.Errorf("activities: record gap %s: %w", gap.Verb, err)
	}
	return GapOutput{Recorded: true, Where: "store"}, nil
}

// isNotFound reports whether err is the store's not-found sentinel.
func isNotFound(err error) bool { return errors.Is(err, fault.ErrNotFound) }
