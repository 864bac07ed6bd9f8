package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

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
	var keep, common []termDF
	for _, t := range terms {
		df, err := s.docFreq(ctx, t)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case df == 0:
		case 2*df >= total:
			common = append(common, termDF{t, df})
		default:
			keep = append(keep, termDF{t, df})
		}
	}
	if len(keep) == 0 {
		return common, total, nil
	}
	return keep, total, nil
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
// bm25() costs a few microseconds per matching row, and an OR-query of
// natural language matches thousands of rows at 10,000 tools. So when the
// query mixes rare and frequent terms, TextSearch first tries an exact
// MaxScore-style shortcut (textSearchSplit) that scores only the rows
// matching a rare term, and falls back to the full query when it cannot
// prove the shortcut's top k equal to the full query's.
func (s *Store) TextSearch(ctx context.Context, query string, k int, f graph.Filter) ([]graph.Hit, error) {
	if k <= 0 {
		return []graph.Hit{}, nil
	}
	terms, total, err := s.pruneTerms(ctx, queryTerms(query))
	if err != nil {
		return nil, fmt.Errorf("sqlite: text search %q: %w", query, err)
	}
	if len(terms) == 0 {
		return []graph.Hit{}, nil
	}
	var rare, frequent []termDF
	for _, t := range terms {
		if 20*t.df > total { // in more than 5% of the tools
			frequent = append(frequent, t)
		} else {
			rare = append(rare, t)
		}
	}
	if len(rare) > 0 && len(frequent) > 0 {
		hits, ok, err := s.textSearchSplit(ctx, rare, frequent, total, k, f)
		if err != nil {
			return nil, fmt.Errorf("sqlite: text search %q: %w", query, err)
		}
		if ok {
			return hits, nil
		}
	}
	hits, err := s.textSearchFull(ctx, ftsMatch(termList(terms)), k, f)
	if err != nil {
		return nil, fmt.Errorf("sqlite: text search %q: %w", query, err)
	}
	return hits, nil
}

// textSearchFull ranks every row matching the OR of all terms.
func (s *Store) textSearchFull(ctx context.Context, match string, k int, f graph.Filter) ([]graph.Hit, error) {
	where, args := filterSQL(f, "t")
	m := newMatcher(f)
	// The inner query ranks on the FTS table alone and keeps the best
	// `limit` rows; the outer one joins them to tools and filters. When the
	// filters reject too many, retry with a larger inner limit.
	for limit := 4*k + 16; ; limit *= 4 {
		rows, err := s.query(ctx, `SELECT t.summary, f.score FROM (
				SELECT rowid, -bm25(tools_fts, `+bm25Weights+`) AS score FROM tools_fts
				WHERE tools_fts MATCH ? ORDER BY score DESC LIMIT ?
			) AS f JOIN tools t ON t.seq = f.rowid
			WHERE `+where+` ORDER BY f.score DESC, t.id`,
			append([]any{match, limit}, args...)...)
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

// splitLimit caps how many rare-term matches textSearchSplit scores; past
// it, unscored rows are bounded by the last kept rare score.
const splitLimit = 2048

// textSearchSplit is an exact shortcut for queries with rare and frequent
// terms. bm25 is a sum of independent per-phrase contributions (each
// depends only on the phrase's idf, its weighted frequency in the row and
// the row's length), so for any row
//
//	score(all terms) = score(rare terms) + score(frequent terms)
//
// and score(frequent terms) < bound = Σ idf(t) * (k1 + 1). It scores the rows
// matching a rare term (few, at most splitLimit of them, best first), adds
// their frequent-term score, and accepts the top k only if the k-th total
// beats every row it did not score: those match no rare term (total below
// bound) or were cut by splitLimit (total below the last rare score plus
// bound). ok is false when that cannot be shown; the caller then runs the
// full query.
func (s *Store) textSearchSplit(ctx context.Context, rare, frequent []termDF, total, k int, f graph.Filter) ([]graph.Hit, bool, error) {
	bound := 0.0
	for _, t := range frequent {
		bound += idf(total, t.df) * (bm25K1 + 1)
	}
	where, args := filterSQL(f, "t")
	rows, err := s.query(ctx, `WITH f AS MATERIALIZED (
			SELECT rowid AS rid, -bm25(tools_fts, `+bm25Weights+`) AS score FROM tools_fts
			WHERE tools_fts MATCH ? ORDER BY score DESC LIMIT ?
		)
		SELECT f.rid, f.score, t.id, t.summary, (SELECT min(score) FROM f), (SELECT count(*) FROM f)
		FROM f JOIN tools t ON t.seq = f.rid WHERE `+where,
		append([]any{ftsMatch(termList(rare)), splitLimit}, args...)...)
	if err != nil {
		return nil, false, err
	}
	type cand struct {
		rid     int64
		score   float64
		id, sum string
	}
	var cands []cand
	byRID := map[int64]int{}
	minRare, n := 0.0, 0
	for rows.Next() {
		var c cand
		if err := rows.Scan(&c.rid, &c.score, &c.id, &c.sum, &minRare, &n); err != nil {
			rows.Close()
			return nil, false, err
		}
		byRID[c.rid] = len(cands)
		cands = append(cands, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(cands) < k {
		return nil, false, nil
	}
	rids := make([]string, 0, len(cands))
	for _, c := range cands {
		rids = append(rids, strconv.FormatInt(c.rid, 10))
	}
	// "+rowid" keeps SQLite from driving the FTS5 cursor by rowid: one
	// cursor per candidate would recompute every phrase's idf each time.
	// One scan of the frequent terms' matches, scoring only candidates, is
	// far cheaper (bm25 in the select list runs only for rows that pass).
	frows, err := s.query(ctx, `SELECT rowid, -bm25(tools_fts, `+bm25Weights+`) FROM tools_fts
		WHERE tools_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))`,
		ftsMatch(termList(frequent)), "["+strings.Join(rids, ",")+"]")
	if err != nil {
		return nil, false, err
	}
	for frows.Next() {
		var rid int64
		var sc float64
		if err := frows.Scan(&rid, &sc); err != nil {
			frows.Close()
			return nil, false, err
		}
		if i, ok := byRID[rid]; ok {
			cands[i].score += sc
		}
	}
	frows.Close()
	if err := frows.Err(); err != nil {
		return nil, false, err
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].id < cands[j].id
	})
	m := newMatcher(f)
	hits := make([]graph.Hit, 0, k)
	for _, c := range cands {
		var sum graph.ToolSummary
		if err := json.Unmarshal([]byte(c.sum), &sum); err != nil {
			return nil, false, fmt.Errorf("decode %q: %w", c.id, err)
		}
		if !m.allow(&sum) {
			continue
		}
		hits = append(hits, graph.Hit{Tool: sum, Score: c.score})
		if len(hits) == k {
			break
		}
	}
	if len(hits) < k {
		return nil, false, nil
	}
	unseen := bound
	if n == splitLimit {
		unseen += minRare
	}
	// A small margin absorbs float rounding and a document frequency read
	// a moment before a concurrent write.
	if hits[k-1].Score <= unseen*(1+1e-6)+1e-6 {
		return nil, false, nil
	}
	return hits, true, nil
}
