package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/toolsmith/toolsmith/graph"
)

// bm25K1 is FTS5's bm25 k1 constant: a phrase contributes at most
// idf * (k1 + 1) to a score, however often it occurs and whatever the
// column weights.
const bm25K1 = 1.2

// termDF is a query term with its document frequency.
type termDF struct {
	term string
	df   int
}

// idf is FTS5's bm25 inverse document frequency for a term found in n of
// total rows, including its clamp of non-positive values to 1e-6.
func idf(total, n int) float64 {
	v := math.Log((float64(total) - float64(n) + 0.5) / (float64(n) + 0.5))
	if v <= 0 {
		return 1e-6
	}
	return v
}

// pruneTerms drops the terms that cannot change a bm25 ranking, so that the
// expensive bm25() runs over fewer rows and phrases:
//
//   - terms no tool contains (they match nothing);
//   - terms contained in at least half of the tools: FTS5's bm25 clamps
//     their idf to 1e-6, so they add at most ~1e-6 to any score, and keeping
//     them only widens the candidate set with near-zero rows ("a", "to").
//
// When every matching term is that common, all of them are kept: the
// ranking is then as flat as bm25 makes it, but the caller still gets hits.
func (s *Store) pruneTerms(ctx context.Context, terms []string) ([]termDF, int, error) {
	total := s.mem.len()
	all := make([]termDF, 0, len(terms))
	for _, t := range terms {
		df, err := s.docFreq(ctx, t)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, termDF{t, df})
	}
	return pruneByDF(all, func(t termDF) int { return t.df }, total), total, nil
}

// pruneByDF is pruneTerms's rule, shared with the text index: drop terms
// in no document, and terms in at least half of the total documents unless
// every matching term is that common.
func pruneByDF[T any](terms []T, df func(T) int, total int) []T {
	var keep, common []T
	for _, t := range terms {
		switch n := df(t); {
		case n == 0:
		case 2*n >= total:
			common = append(common, t)
		default:
			keep = append(keep, t)
		}
	}
	if len(keep) == 0 {
		return common
	}
	return keep
}

func termList(ts []termDF) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.term
	}
	return out
}

// TextSearch runs a weighted bm25 full-text query. Scores are -bm25, so
// higher is better and positive for a match.
//
// Ranking runs on the in-memory textIndex, which computes FTS5's bm25 over
// FTS5's own tokens; FTS5 itself answers only when the index cannot (a
// query word that FTS5 splits into a phrase, or an index that failed to
// update).
func (s *Store) TextSearch(ctx context.Context, query string, k int, f graph.Filter) ([]graph.Hit, error) {
	if k <= 0 {
		return []graph.Hit{}, nil
	}
	words := queryTerms(query)
	if len(words) == 0 {
		return []graph.Hit{}, nil
	}
	hits, ok, err := s.textSearchIndex(ctx, words, k, f)
	if err != nil {
		return nil, fmt.Errorf("sqlite: text search %q: %w", query, err)
	}
	if ok {
		return hits, nil
	}
	terms, _, err := s.pruneTerms(ctx, words)
	if err != nil {
		return nil, fmt.Errorf("sqlite: text search %q: %w", query, err)
	}
	if len(terms) == 0 {
		return []graph.Hit{}, nil
	}
	hits, err = s.textSearchFull(ctx, ftsMatch(termList(terms)), k, f)
	if err != nil {
		return nil, fmt.Errorf("sqlite: text search %q: %w", query, err)
	}
	return hits, nil
}

// textSearchIndex ranks on the text index; ok is false when it cannot.
func (s *Store) textSearchIndex(ctx context.Context, words []string, k int, f graph.Filter) ([]graph.Hit, bool, error) {
	terms := make([]string, len(words))
	for i, w := range words {
		t, ok, err := s.text.term(ctx, w)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, nil
		}
		terms[i] = t
	}
	m := newMatcher(f)
	hits := make([]graph.Hit, 0, k)
	var tmp graph.ToolSummary // Allow's copy
	err := s.text.search(terms, func(id string, score float64) bool {
		sum, ok := s.mem.summary(id)
		if !ok || !m.pushed(&sum) || !m.allowOn(&tmp, &sum) {
			return true
		}
		hits = append(hits, graph.Hit{Tool: graph.CloneSummary(sum), Score: score})
		return len(hits) < k
	})
	if err != nil {
		return nil, false, nil // the index is out of date: FTS5 answers
	}
	return hits, true, nil
}

// textSearchSQL ranks on the FTS table alone and keeps the best rows
// (arguments: the MATCH expression and the limit), then joins them to the
// tools that pass where (on tools t); CROSS JOIN keeps the FTS rows the
// outer loop (plan_test.go checks).
func textSearchSQL(where string) string {
	return `SELECT t.summary, f.score FROM (
				SELECT rowid, -bm25(tools_fts, ` + bm25Weights + `) AS score FROM tools_fts
				WHERE tools_fts MATCH ? ORDER BY score DESC LIMIT ?
			) AS f CROSS JOIN tools t ON t.seq = f.rowid
			WHERE ` + where + ` ORDER BY f.score DESC, t.id`
}

// textSearchFull ranks every row matching the OR of all terms.
func (s *Store) textSearchFull(ctx context.Context, match string, k int, f graph.Filter) ([]graph.Hit, error) {
	where, args := filterSQL(f, "t")
	m := newMatcher(f)
	// The inner query ranks on the FTS table alone and keeps the best
	// `limit` rows; the outer one joins them to tools and filters. When the
	// filters reject too many, retry with a larger inner limit.
	for limit := 4*k + 16; ; limit *= 4 {
		rows, err := s.query(ctx, textSearchSQL(where), append([]any{match, limit}, args...)...)
		if err != nil {
			return nil, err
		}
		hits := make([]graph.Hit, 0, k)
		for rows.Next() {
			var sj string
			var score float64
			if err := rows.Scan(&sj, &score); err != nil {
				rows.Close()
				return nil, err
			}
			var sum graph.ToolSummary
			if err := json.Unmarshal([]byte(sj), &sum); err != nil {
				rows.Close()
				return nil, fmt.Errorf("decode: %w", err)
			}
			if !m.allow(&sum) {
				continue
			}
			hits = append(hits, graph.Hit{Tool: sum, Score: score})
			if len(hits) == k {
				break
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		// Done when k hits were found, or when the inner query was not cut
		// by its limit (every match was considered).
		if len(hits) == k || limit >= s.mem.len() {
			return hits, nil
		}
	}
}
