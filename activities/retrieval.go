package activities

import (
	"context"
	"fmt"

	"github.com/toolsmith/toolsmith/retrieval"
)

// RetrievalSearcher adapts retrieval.Service (hybrid ranking: semantic,
// keyword, graph, usage and history signals) to Searcher, with the
// fulfilment decision's query (retrieval.FulfilmentQuery: the verb's query
// as a whole). Hits keep the service's order; Similarity is the raw semantic
// signal (cosine), the scale the substitution threshold is calibrated on.
type RetrievalSearcher struct {
	Service *retrieval.Service
}

// maxRetrievalTools is retrieval's upper bound on MaxTools.
const maxRetrievalTools = 20

// Search implements Searcher.
func (r RetrievalSearcher) Search(ctx context.Context, req SearchRequest) ([]SearchHit, error) {
	n := req.Limit
	if n <= 0 || n > maxRetrievalTools {
		n = min(max(n, 10), maxRetrievalTools)
	}
	q := retrieval.FulfilmentQuery(req.Query, req.Context, req.Caller, nil)
	q.MaxTools = n
	res, err := r.Service.Search(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("activities: retrieval search: %w", err)
	}
	out := make([]SearchHit, 0, len(res.Hits))
	rec := r.Service.Record() // the promoted version's, read with the ranking it came with
	for _, h := range res.Hits {
		c := h.Candidate()
		lo, ok := rec.Of(h.Tool.ID)
		out = append(out, SearchHit{Tool: h.Tool, Similarity: c.Similarity, Score: c.Score, Keyword: c.Keyword, Subword: c.Subword, Learned: c.Learned,
			Record: lo, Recorded: ok})
	}
	return out, nil
}
