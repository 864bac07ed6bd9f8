package neo4j

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// VectorSearch returns the k tools whose embeddings have the highest cosine
// similarity with vec, from the tool_embedding vector index.
func (s *Store) VectorSearch(ctx context.Context, vec []float32, k int, f graph.Filter) ([]graph.Hit, error) {
	if err := s.checkDim(ctx, "vector search", vec); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, nil
	}
	var hits []graph.Hit
	var err error
	if len(f.IDs) > 0 {
		hits, err = s.scoreIDs(ctx, cypherVectorScoreIDs, vec, k, f)
	} else {
		hits, err = s.indexSearch(ctx, cypherVectorSearch, map[string]any{"vector": vectorParam(vec)}, k, f, fromCosineScore)
	}
	if err != nil {
		return nil, wrapErr("vector search", err)
	}
	return hits, nil
}

// VectorScores is graph.VectorScorer: the cosine of each listed tool that
// f allows with each of vecs, in one statement, as VectorSearch scores it.
// Retrieval's phrase signal scores its candidates against every window of
// the query this way, instead of one search per window.
func (s *Store) VectorScores(ctx context.Context, vecs [][]float32, f graph.Filter) (map[string][]float64, error) {
	vs := make([]any, len(vecs))
	for i, v := range vecs {
		if err := s.checkDim(ctx, "vector scores", v); err != nil {
			return nil, err
		}
		vs[i] = vectorParam(v)
	}
	out := map[string][]float64{}
	if len(f.IDs) == 0 || len(vecs) == 0 {
		return out, nil
	}
	err := s.r.read(ctx, func(tx txRunner) error {
		clear(out)
		recs, err := tx.run(ctx, cypherVectorScoresIDs, filterParams(f, map[string]any{"vectors": vs}))
		if err != nil {
			return err
		}
		for _, r := range recs {
			sum, ok, err := allowedSummary(r, f)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			scores, err := getFloats(r, "scores")
			if err != nil {
				return err
			}
			if len(scores) != len(vecs) {
				return fmt.Errorf("tool %q: %d scores for %d vectors", sum.ID, len(scores), len(vecs))
			}
			for i, x := range scores {
				scores[i] = fromCosineScore(x)
			}
			out[sum.ID] = scores
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("vector scores", err)
	}
	return out, nil
}

// UsageSearch is VectorSearch over usage centroids (tool_usage_centroid).
func (s *Store) UsageSearch(ctx context.Context, vec []float32, k int, f graph.Filter) ([]graph.Hit, error) {
	if err := s.checkDim(ctx, "usage search", vec); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, nil
	}
	var hits []graph.Hit
	var err error
	if len(f.IDs) > 0 {
		hits, err = s.scoreIDs(ctx, cypherUsageScoreIDs, vec, k, f)
	} else {
		hits, err = s.indexSearch(ctx, cypherUsageSearch, map[string]any{"vector": vectorParam(vec)}, k, f, fromCosineScore)
	}
	if err != nil {
		return nil, wrapErr("usage search", err)
	}
	return hits, nil
}

// TextSearch runs a weighted Lucene query over the tool_text full-text index.
// The user's text is escaped: it can never change the query's structure.
func (s *Store) TextSearch(ctx context.Context, query string, k int, f graph.Filter) ([]graph.Hit, error) {
	lq := luceneQuery(query)
	if lq == "" || k <= 0 {
		return []graph.Hit{}, nil
	}
	hits, err := s.indexSearch(ctx, cypherTextSearch, map[string]any{"query": lq}, k, f, func(x float64) float64 { return x })
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("text search %q", query), err)
	}
	return hits, nil
}

// fetchFactor is how many candidates an index query asks for per wanted hit,
// and how much the request grows when Allow rejected too many.
const fetchFactor = 4

// indexSearch asks an index procedure for k×4 candidates, keeps those that
// pass the pushed-down filter (in Cypher) and Allow (in Go), and asks again
// for four times as many until k hits are found or the index had no more to
// give. Hits are ordered by score, then id, like the SQLite store's.
func (s *Store) indexSearch(ctx context.Context, cypher string, base map[string]any, k int, f graph.Filter, score func(float64) float64) ([]graph.Hit, error) {
	var out []graph.Hit
	err := s.r.read(ctx, func(tx txRunner) error {
		for fetch := fetchFactor * k; ; fetch *= fetchFactor {
			params := filterParams(f, map[string]any{"fetch": int64(fetch)})
			for key, v := range base {
				params[key] = v
			}
			recs, err := tx.run(ctx, cypher, params)
			if err != nil {
				return err
			}
			out = []graph.Hit{}
			if len(recs) == 0 {
				return nil
			}
			scanned, err := getInt(recs[0], "scanned")
			if err != nil {
				return err
			}
			rows, err := getMaps(recs[0], "hits")
			if err != nil {
				return err
			}
			if out, err = appendHits(out, rows, f, score); err != nil {
				return err
			}
			if len(out) >= k || scanned < int64(fetch) {
				return nil
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return bestHits(out, k), nil
}

// scoreIDs scores exactly the tools of f.IDs that pass the filter and
// Allow, best first (score, then id), at most k.
func (s *Store) scoreIDs(ctx context.Context, cypher string, vec []float32, k int, f graph.Filter) ([]graph.Hit, error) {
	var out []graph.Hit
	err := s.r.read(ctx, func(tx txRunner) error {
		out = []graph.Hit{}
		recs, err := tx.run(ctx, cypher, filterParams(f, map[string]any{"vector": vectorParam(vec)}))
		if err != nil {
			return err
		}
		out, err = appendHits(out, recs, f, fromCosineScore)
		return err
	})
	if err != nil {
		return nil, err
	}
	return bestHits(out, k), nil
}

// appendHits appends the rows' summaries that pass Allow, each with its
// score converted by score.
func appendHits(out []graph.Hit, rows []record, f graph.Filter, score func(float64) float64) ([]graph.Hit, error) {
	for _, r := range rows {
		sum, ok, err := allowedSummary(r, f)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		sc, err := getFloat(r, "score")
		if err != nil {
			return nil, err
		}
		out = append(out, graph.Hit{Tool: sum, Score: score(sc)})
	}
	return out, nil
}

// bestHits orders hits by score, then id, like the SQLite store, and keeps
// the first k.
func bestHits(out []graph.Hit, k int) []graph.Hit {
	graph.SortHits(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// meanVectorTTL bounds how old the cached mean vector may get; a write
// through this store marks it stale, and a stale mean is recomputed once it
// is meanVectorMinAge old (so a bulk import does not recompute it per
// search: one tool moves the mean of many very little).
const (
	meanVectorTTL    = time.Minute
	meanVectorMinAge = 5 * time.Second
)

// MeanVector returns the mean of the normalised embeddings of active tools
// (nil when there are none), for centring cosines (graph.MeanVectorer). It
// reads every active embedding, so it is cached (see meanVectorTTL).
func (s *Store) MeanVector(ctx context.Context) ([]float32, error) {
	s.meanMu.Lock()
	defer s.meanMu.Unlock()
	now := s.now()
	if age := now.Sub(s.meanAt); !s.meanAt.IsZero() && age < meanVectorTTL && (!s.meanStale || age < meanVectorMinAge) {
		return s.mean, nil
	}
	var sum []float64
	n := 0
	err := s.r.read(ctx, func(tx txRunner) error {
		sum, n = nil, 0
		recs, err := tx.run(ctx, cypherActiveEmbeddings, nil)
		if err != nil {
			return err
		}
		for _, r := range recs {
			v, err := getVector(r, "embedding")
			if err != nil {
				return err
			}
			v = graph.Normalize(v)
			if sum == nil {
				sum = make([]float64, len(v))
			}
			if len(v) != len(sum) {
				continue
			}
			for i, x := range v {
				sum[i] += float64(x)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("mean vector", err)
	}
	var mean []float32
	if n > 0 {
		mean = make([]float32, len(sum))
		for i, x := range sum {
			mean[i] = float32(x / float64(n))
		}
	}
	s.mean, s.meanAt, s.meanStale = mean, now, false
	return mean, nil
}

// staleMean marks the cached mean vector stale after a write.
func (s *Store) staleMean() {
	s.meanMu.Lock()
	s.meanStale = true
	s.meanMu.Unlock()
}

// maxQueryTerms bounds the OR-query so hostile or pasted input stays cheap.
const maxQueryTerms = 32

// textFields are the full-text index's properties with their Lucene boosts,
// the SQLite store's bm25 column weights: name and verb state the tool's
// intent, tags and entities are curated keywords, use cases are query-like
// phrases and the description is the baseline.
var textFields = []struct {
	name  string
	boost int
}{
	{"name", 8},
	{"verbText", 6},
	{"tagsText", 4},
	{"entitiesText", 4},
	{"useCasesText", 2},
	{"description", 1},
}

// luceneSpecial lists every character with a meaning in Lucene's classic
// query syntax: + - && || ! ( ) { } [ ] ^ " ~ * ? : \ /
const luceneSpecial = `+-&|!(){}[]^"~*?:\/`

// escapeLucene backslash-escapes every Lucene special character of term.
func escapeLucene(term string) string {
	var b strings.Builder
	for _, r := range term {
		if strings.ContainsRune(luceneSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// luceneQuery turns plain user text into a safe Lucene OR query over the
// weighted text fields: each whitespace-separated word is lower-cased (so
// AND, OR and NOT are plain words), de-duplicated and escaped. It returns ""
// when the text has no word.
func luceneQuery(text string) string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range strings.Fields(text) {
		w = strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, escapeLucene(w))
		if len(terms) == maxQueryTerms {
			break
		}
	}
	if len(terms) == 0 {
		return ""
	}
	group := "(" + strings.Join(terms, " OR ") + ")"
	parts := make([]string, len(textFields))
	for i, f := range textFields {
		parts[i] = f.name + ":" + group + "^" + strconv.Itoa(f.boost)
	}
	return strings.Join(parts, " OR ")
}

// Related returns the tools linked from id by kind, best first.
func (s *Store) Related(ctx context.Context, id string, kind graph.RelKind, limit int, f graph.Filter) ([]graph.Hit, error) {
	var cypher string
	switch kind {
	case graph.RelDependsOn:
		cypher = cypherRelatedDependsOn
	case graph.RelPairsWith:
		cypher = cypherRelatedPairs
	case graph.RelAlternative:
		cypher = cypherRelatedAlternatives
	default:
		return nil, fmt.Errorf("neo4j: related %q: kind %q: %w", id, kind, fault.ErrInvalid)
	}
	limit = graph.Limit(limit, graph.DefaultRelatedLimit, 0)
	var out []graph.Hit
	err := s.r.read(ctx, func(tx txRunner) error {
		out = []graph.Hit{}
		recs, err := tx.run(ctx, cypherToolExists, map[string]any{"id": id})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fault.ErrNotFound
		}
		recs, err = tx.run(ctx, cypher, filterParams(f, map[string]any{"id": id}))
		if err != nil {
			return err
		}
		for _, r := range recs {
			sum, ok, err := allowedSummary(r, f)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			sc, err := getFloat(r, "score")
			if err != nil {
				return err
			}
			out = append(out, graph.Hit{Tool: sum, Score: sc})
			if len(out) == limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("related %q", id), err)
	}
	return out, nil
}
