package retrain

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
)

// RecordFolds is how many parts BuildRecord cuts the served queries into:
// each part is replayed over the evidence of the others.
const RecordFolds = 5

// BuildRecord learns each tool's record as a first candidate
// (retrieval.Record) from served queries (oldest first): every distinct
// query text is searched as a novel verb's fulfilment searches
// (retrieval.FulfilmentQuery), over a view of st whose usage evidence is
// the served queries of the other folds only, with the model m (nil: the
// configured ranking). A query never finds itself, or a repeat of its own
// text, in the memory it is ranked with: replayed over its own use every
// query would put its own tool first, and every record would read right.
// The tool the search puts first counts First, and Right when that query
// was served by it. evs lacking embeddings are embedded with emb.
func BuildRecord(ctx context.Context, st graph.Store, emb embed.Embedder, rank retrieval.Options, m *retrieval.Model, evs []graph.ServedQuery) (*retrieval.Record, error) {
	evs = append([]graph.ServedQuery(nil), evs...)
	var texts []string
	var at []int
	for i, e := range evs {
		if len(e.Embedding) == 0 {
			texts, at = append(texts, e.Query), append(at, i)
		}
	}
	for i := 0; i < len(texts); i += 256 {
		j := min(i+256, len(texts))
		vs, err := emb.EmbedDocuments(ctx, texts[i:j])
		if err != nil {
			return nil, fmt.Errorf("retrain: record: embed: %w", err)
		}
		if len(vs) != j-i {
			return nil, fmt.Errorf("retrain: record: embed: %d vectors for %d texts", len(vs), j-i)
		}
		for k, v := range vs {
			evs[at[i+k]].Embedding = v
		}
	}
	fold := func(q string) int {
		h := fnv.New32a()
		h.Write([]byte(normText(q)))
		return int(h.Sum32() % RecordFolds)
	}
	tools := map[string]retrieval.RecordEntry{}
	opts := rank
	opts.CacheSize, opts.FollowEvery, opts.Observer = -1, -1, nil
	for f := range RecordFolds {
		var train []graph.ServedQuery
		served := map[string]map[string]bool{}
		var order []string
		text := map[string]string{}
		for _, e := range evs {
			k := normText(e.Query)
			if fold(e.Query) != f {
				train = append(train, e)
				continue
			}
			if served[k] == nil {
				served[k] = map[string]bool{}
				order = append(order, k)
				text[k] = e.Query
			}
			served[k][e.ToolID] = true
		}
		if len(order) == 0 {
			continue
		}
		svc := retrieval.New(newView(st, train), emb, opts)
		svc.SetModel(m)
		for _, k := range order {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hits, _, err := svc.Rank(ctx, retrieval.FulfilmentQuery(text[k], "", caller, nil))
			if err != nil {
				return nil, fmt.Errorf("retrain: record: replay %q: %w", text[k], err)
			}
			if len(hits) == 0 {
				continue
			}
			id := hits[0].Tool.ID
			e := tools[id]
			e.First++
			if served[k][id] {
				e.Right++
			}
			tools[id] = e
		}
	}
	return retrieval.NewRecord(tools), nil
}
