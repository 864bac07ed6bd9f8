package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
)

// SearchRequest asks for the tools a caller can use for an intent.
type SearchRequest struct {
	// Query is the intent text (verb words and description).
	Query string
	// Context is the surrounding request or plan text (entities etc.).
	Context string
	Caller  access.Caller
	Limit   int
}

// SearchHit is one candidate tool.
type SearchHit struct {
	Tool graph.ToolSummary
	// Similarity is the cosine similarity between the query and the tool's
	// embedding in [-1, 1]; the substitution threshold applies to it, so
	// every Searcher must report it on the same scale (0 when unknown).
	Similarity float64
	// Score is the searcher's own ranking score (higher is better).
	Score float64
	// Keyword and Subword are the keyword and subword signals on the
	// ranking's scale (0 when the searcher has none); the decision model
	// reads them.
	Keyword, Subword float64
	// Learned is the part of Score the usage signals added
	// (retrieval.Candidate.Learned; 0 when the searcher has none).
	Learned float64
	// Record and Recorded are the tool's record as a first candidate,
	// learned from use (retrieval.Candidate.Record; 0 and false when the
	// searcher has none).
	Record   float64
	Recorded bool
}

// Searcher finds candidate tools, best first, visible to the caller only.
// retrieval.Service is meant to satisfy it; StoreSearcher is the default.
type Searcher interface {
	Search(ctx context.Context, req SearchRequest) ([]SearchHit, error)
}

// StoreSearcher is a Searcher over a graph.Store: vector k-NN on the query
// embedding plus full-text search, both filtered by the caller. Hits are
// ordered by similarity; full-text-only hits follow with Similarity 0 (they
// can be offered to the planner but never substituted).
type StoreSearcher struct {
	Store    graph.Store
	Embedder embed.Embedder
}

// Search implements Searcher.
func (s StoreSearcher) Search(ctx context.Context, req SearchRequest) ([]SearchHit, error) {
	if s.Store == nil || s.Embedder == nil {
		return nil, fmt.Errorf("activities: search: store searcher needs a store and an embedder")
	}
	k := req.Limit
	if k <= 0 {
		k = 10
	}
	vec, err := s.Embedder.EmbedQuery(ctx, req.Query)
	if err != nil {
		return nil, fmt.Errorf("activities: search: embed query: %w", err)
	}
	f := req.Caller.Filter()
	vhits, err := s.Store.VectorSearch(ctx, vec, k, f)
	if err != nil {
		return nil, fmt.Errorf("activities: search: vector: %w", err)
	}
	thits, err := s.Store.TextSearch(ctx, req.Query, k, f)
	if err != nil {
		return nil, fmt.Errorf("activities: search: text: %w", err)
	}
	out := make([]SearchHit, 0, len(vhits)+len(thits))
	seen := map[string]bool{}
	for _, h := range vhits {
		seen[h.Tool.ID] = true
		out = append(out, SearchHit{Tool: h.Tool, Similarity: h.Score, Score: h.Score})
	}
	for _, h := range thits {
		if !seen[h.Tool.ID] {
			seen[h.Tool.ID] = true
			out = append(out, SearchHit{Tool: h.Tool, Score: 0})
		}
	}
	slices.SortStableFunc(out, func(a, b SearchHit) int {
		switch {
		case a.Similarity > b.Similarity:
			return -1
		case a.Similarity < b.Similarity:
			return 1
		}
		return strings.Compare(a.Tool.ID, b.Tool.ID)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// VerbQuery turns a verb and description into query text:
// ("CONVERT_CURRENCY", "change money") → "convert currency: change money".
func VerbQuery(verb, description string) string {
	words := strings.ToLower(strings.Join(strings.FieldsFunc(verb, func(r rune) bool { return r == '_' || r == '-' || r == '.' }), " "))
	description = strings.TrimSpace(description)
	if description == "" {
		return words
	}
	return words + ": " + description
}
