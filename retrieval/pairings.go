package retrieval

import (
	"context"
	"fmt"
	"sort"

	"github.com/toolsmith/toolsmith/graph"
)

// Pairing sources.
const (
	PairDeclared = "declared" // a PAIRS_WITH edge its manifest declares
	PairLearned  = "learned"  // tools used together (graph.Pairings)
)

// pairHit is a paired tool with where the pairing comes from.
type pairHit struct {
	graph.Hit
	Source string
	// Weight is a learned pairing's decayed evidence (0 for declared).
	Weight float64
}

// learnedStrength maps a learned pairing's weight (uses together, decayed)
// onto [0, 1): one use 0.5, three 0.75.
func learnedStrength(w float64) float64 { return w / (1 + w) }

// pairings returns the tools paired with id that f allows: the declared
// ones first (by their score), then the learned ones not declared (by
// strength), at most limit.
func (s *Service) pairings(ctx context.Context, id string, limit int, f graph.Filter) ([]pairHit, error) {
	declared, err := s.store.Related(ctx, id, graph.RelPairsWith, limit, f)
	if err != nil {
		return nil, fmt.Errorf("retrieval: pairings of %q: %w", id, err)
	}
	out := make([]pairHit, 0, len(declared))
	seen := map[string]bool{}
	for _, h := range declared {
		out = append(out, pairHit{Hit: h, Source: PairDeclared})
		seen[h.Tool.ID] = true
	}
	if len(out) >= limit {
		return out, nil
	}
	learned, err := s.store.LearnedPairs(ctx, id, limit, f, s.opts.Now())
	if err != nil {
		return nil, fmt.Errorf("retrieval: learned pairings of %q: %w", id, err)
	}
	var extra []pairHit
	for _, h := range learned {
		if seen[h.Tool.ID] {
			continue
		}
		w := h.Score
		h.Score = learnedStrength(w)
		extra = append(extra, pairHit{Hit: h, Source: PairLearned, Weight: w})
	}
	sort.SliceStable(extra, func(i, j int) bool { return extra[i].Score > extra[j].Score })
	for _, h := range extra {
		if len(out) == limit {
			break
		}
		out = append(out, h)
	}
	return out, nil
}
