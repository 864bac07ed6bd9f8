package retrain

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// view is the store as a replay sees it: the catalogue as it is, but the
// usage evidence (served queries, usage centroids) only of the events it
// is given, so a replayed query never finds itself, or anything after
// it, in the memory it is ranked with. Both models of a comparison rank
// over the same view. Session history is empty (replays have no session),
// and what derives from every event (learned pairings, the analytics'
// popularity snapshot) is left out, for both alike.
type view struct {
	graph.Store
	served    []graph.ServedQuery // newest first
	centroids map[string]centroid
}

type centroid struct {
	vec []float32
	n   int
}

var _ graph.Store = (*view)(nil)

// newView builds the view of st with the evidence of events (oldest
// first; each with its embedding).
func newView(st graph.Store, events []graph.ServedQuery) *view {
	v := &view{Store: st, centroids: map[string]centroid{}}
	sums := map[string][]float64{}
	for i := len(events) - 1; i >= 0; i-- {
		v.served = append(v.served, events[i])
	}
	for _, e := range events {
		if len(e.Embedding) == 0 {
			continue
		}
		s := sums[e.ToolID]
		if s == nil {
			s = make([]float64, len(e.Embedding))
			sums[e.ToolID] = s
		}
		if len(s) != len(e.Embedding) {
			continue
		}
		for i, x := range graph.Normalize(e.Embedding) {
			s[i] += float64(x)
		}
		c := v.centroids[e.ToolID]
		c.n++
		v.centroids[e.ToolID] = c
	}
	for id, s := range sums {
		vec := make([]float32, len(s))
		for i, x := range s {
			vec[i] = float32(x)
		}
		c := v.centroids[id]
		c.vec = graph.Normalize(vec)
		v.centroids[id] = c
	}
	return v
}

// ServedQueries is the view's evidence, newest first.
func (v *view) ServedQueries(_ context.Context, limit int) ([]graph.ServedQuery, error) {
	return v.served[:min(graph.Limit(limit, graph.DefaultEventsLimit, 0), len(v.served))], nil
}

// ServedQueriesAfter: nothing is written to a view after it is made.
func (v *view) ServedQueriesAfter(context.Context, int64, int) ([]graph.ServedQuery, error) {
	return nil, nil
}

// SessionHistory: replays have no session.
func (v *view) SessionHistory(context.Context, string, int) ([]graph.SessionEvent, error) {
	return nil, nil
}

// Usage is the store's counts with the view's centroids.
func (v *view) Usage(ctx context.Context, ids []string) (map[string]graph.Usage, error) {
	u, err := v.Store.Usage(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]graph.Usage, len(u))
	for id, x := range u {
		c := v.centroids[id]
		x.Centroid, x.CentroidN = c.vec, c.n
		out[id] = x
	}
	return out, nil
}

// UsageSearch is VectorSearch over the view's centroids.
func (v *view) UsageSearch(ctx context.Context, vec []float32, k int, f graph.Filter) ([]graph.Hit, error) {
	if k <= 0 || len(v.centroids) == 0 {
		return nil, nil
	}
	type scored struct {
		id    string
		score float64
	}
	var all []scored
	for id, c := range v.centroids {
		if len(c.vec) == len(vec) {
			all = append(all, scored{id, graph.Cosine(vec, c.vec)})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].id < all[j].id
	})
	score := map[string]float64{}
	var ids []string
	for _, s := range all {
		ids = append(ids, s.id)
		score[s.id] = s.score
	}
	if len(ids) == 0 {
		return nil, nil
	}
	// The best few, with room for those the filter hides (ListTools reads
	// at most 1000).
	ids = ids[:min(len(ids), max(4*k, 200), 1000)]
	lf := f
	lf.IDs = ids
	page, err := v.Store.ListTools(ctx, graph.ListQuery{Limit: len(ids), Filter: lf})
	if err != nil {
		return nil, fmt.Errorf("retrain: usage search: %w", err)
	}
	hits := make([]graph.Hit, 0, len(page.Items))
	for _, t := range page.Items {
		hits = append(hits, graph.Hit{Tool: t, Score: score[t.ID]})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Tool.ID < hits[j].Tool.ID
	})
	return hits[:min(k, len(hits))], nil
}

// LearnedPairs: learned pairings derive from every event, so a view has
// none (for both models of a comparison alike).
func (v *view) LearnedPairs(context.Context, string, int, graph.Filter, time.Time) ([]graph.Hit, error) {
	return nil, nil
}

// LearnPairs: nothing is learned into a view.
func (v *view) LearnPairs(context.Context, []graph.PairEvidence) error { return nil }

// GetSnapshot: the analytics' snapshots (the popularity prior) derive from
// every event, so a view has none.
func (v *view) GetSnapshot(context.Context, string) (graph.Snapshot, error) {
	return graph.Snapshot{}, fmt.Errorf("retrain: a replay's view keeps no snapshots: %w", fault.ErrNotFound)
}
