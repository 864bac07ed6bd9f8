package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// VectorSearch returns the k tools whose embeddings have the highest cosine
// similarity with vec: an exact scan of the in-memory index.
func (s *Store) VectorSearch(ctx context.Context, vec []float32, k int, f graph.Filter) ([]graph.Hit, error) {
	if err := s.checkDim("vector search", vec); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: vector search: %w", err)
	}
	return s.mem.search(graph.Normalize(vec), k, newMatcher(f), false), nil
}

// VectorScores scores every listed tool f allows against each of vecs (see
// graph.VectorScorer), from memory.
func (s *Store) VectorScores(ctx context.Context, vecs [][]float32, f graph.Filter) (map[string][]float64, error) {
	unit := make([][]float32, len(vecs))
	for i, v := range vecs {
		if err := s.checkDim("vector scores", v); err != nil {
			return nil, err
		}
		unit[i] = graph.Normalize(v)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: vector scores: %w", err)
	}
	return s.mem.scores(unit, f.IDs, newMatcher(f)), nil
}

// MeanVector returns the mean of the normalised embeddings of active tools
// (nil when there are none), for retrieval to centre cosine scores on (see
// graph.MeanVectorer). It is served from memory.
func (s *Store) MeanVector(ctx context.Context) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: mean vector: %w", err)
	}
	return slices.Clone(s.mem.meanVector()), nil
}

// UsageSearch is VectorSearch over usage centroids.
func (s *Store) UsageSearch(ctx context.Context, vec []float32, k int, f graph.Filter) ([]graph.Hit, error) {
	if err := s.checkDim("usage search", vec); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: usage search: %w", err)
	}
	return s.mem.search(graph.Normalize(vec), k, newMatcher(f), true), nil
}

// ftsColumnWeights are the bm25 column weights, in the column order of
// tools_fts (ftsColumns): name, verb, description, tags, use_cases, entities.
//
//   - name (8) and verb (6) are short identifiers chosen to state the tool's
//     intent; a query term hitting them is the strongest evidence of a match.
//     Name wins over verb because names are written for humans and carry the
//     object ("Currency Converter"), verbs are often generic (GET_*).
//   - tags (4) and entities (4) are curated keywords: precise but not the
//     tool's purpose in themselves (a tag "travel" fits many tools).
//   - use_cases (2) are phrases written like user queries, useful for recall
//     but longer and looser.
//   - description (1) is the baseline: long prose where incidental words
//     appear; bm25's length normalisation already tempers it, and a higher
//     weight would let verbose manifests outrank precise ones.
var ftsColumnWeights = [...]float64{8, 6, 1, 4, 2, 4}

// bm25Weights is ftsColumnWeights as the argument list of FTS5's bm25().
var bm25Weights = func() string {
	parts := make([]string, len(ftsColumnWeights))
	for i, w := range ftsColumnWeights {
		parts[i] = strconv.FormatFloat(w, 'f', 1, 64)
	}
	return strings.Join(parts, ", ")
}()

// maxQueryTerms bounds the OR-query so hostile or pasted input stays cheap.
const maxQueryTerms = 32

// queryTerms splits plain user text into its distinct lower-cased runs of
// letters and digits, at most maxQueryTerms of them. Quotes, '*', '-',
// parentheses, ':', '^' and the like are separators, so no input can carry
// FTS5 syntax through.
func queryTerms(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	seen := make(map[string]bool, len(words))
	terms := make([]string, 0, len(words))
	for _, w := range words {
		w = strings.ToLower(w)
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, w)
		if len(terms) == maxQueryTerms {
			break
		}
	}
	return terms
}

// ftsMatch renders terms as an FTS5 OR-query. Every term is a double-quoted
// string (terms hold only letters and digits, so there is no '"' to escape),
// which makes operator words (AND, OR, NOT, NEAR) plain terms and rules out
// column filters, prefixes and grouping. "" when there are no terms.
func ftsMatch(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + t + `"`
	}
	return strings.Join(q, " OR ")
}

// ftsQuery is ftsMatch(queryTerms(text)).
func ftsQuery(text string) string { return ftsMatch(queryTerms(text)) }

// docFreq returns how many indexed tools contain term, cached until the next
// write. The cache is cleared (not patched) on every committed upsert.
func (s *Store) docFreq(ctx context.Context, term string) (int, error) {
	s.dfMu.Lock()
	n, ok := s.df[term]
	s.dfMu.Unlock()
	if ok {
		return n, nil
	}
	rows, err := s.query(ctx, `SELECT count(*) FROM tools_fts WHERE tools_fts MATCH ?`, ftsMatch([]string{term}))
	if err != nil {
		return 0, fmt.Errorf("document frequency of %q: %w", term, err)
	}
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return 0, fmt.Errorf("document frequency of %q: %w", term, err)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("document frequency of %q: %w", term, err)
	}
	s.dfMu.Lock()
	if s.df == nil {
		s.df = map[string]int{}
	}
	s.df[term] = n
	s.dfMu.Unlock()
	return n, nil
}

// resetDocFreq drops the document-frequency cache after a write.
func (s *Store) resetDocFreq() {
	s.dfMu.Lock()
	s.df = nil
	s.dfMu.Unlock()
}

// relatedSQL is the query for the tools linked from id by kind that pass
// where (on tools t), and its arguments before where's. Joining tools hides
// edges whose target is not registered yet; CROSS JOIN keeps the edges the
// outer loop (plan_test.go checks).
func relatedSQL(id string, kind graph.RelKind, where string) (string, []any) {
	edges := `SELECT to_id AS peer, score FROM relations WHERE from_id = ? AND kind = ?`
	args := []any{id, string(kind)}
	if kind == graph.RelAlternative {
		// Symmetric: edges in either direction, best score per peer.
		edges = `SELECT peer, max(score) AS score FROM (
				SELECT to_id AS peer, score FROM relations WHERE from_id = ? AND kind = ?
				UNION ALL
				SELECT from_id AS peer, score FROM relations WHERE to_id = ? AND kind = ?
			) WHERE peer <> ? GROUP BY peer`
		args = []any{id, string(kind), id, string(kind), id}
	}
	return `SELECT t.summary, e.score FROM (` + edges + `) AS e
		CROSS JOIN tools t ON t.id = e.peer WHERE ` + where + ` ORDER BY e.score DESC, t.id`, args
}

// Related returns the tools linked from id by kind, best first.
func (s *Store) Related(ctx context.Context, id string, kind graph.RelKind, limit int, f graph.Filter) ([]graph.Hit, error) {
	switch kind {
	case graph.RelDependsOn, graph.RelPairsWith, graph.RelAlternative:
	default:
		return nil, fmt.Errorf("sqlite: related %q: kind %q: %w", id, kind, fault.ErrInvalid)
	}
	limit = graph.Limit(limit, graph.DefaultRelatedLimit, 0)
	var exists int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM tools WHERE id = ?`, id).Scan(&exists); err != nil {
		return nil, fmt.Errorf("sqlite: related %q: %w", id, err)
	}
	if exists == 0 {
		return nil, fmt.Errorf("sqlite: related %q: %w", id, fault.ErrNotFound)
	}
	where, args := filterSQL(f, "t")
	q, edgeArgs := relatedSQL(id, kind, where)
	rows, err := s.db.QueryContext(ctx, q, append(edgeArgs, args...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: related %q: %w", id, err)
	}
	defer rows.Close()
	m := newMatcher(f)
	out := []graph.Hit{}
	for rows.Next() {
		var sj string
		var score float64
		if err := rows.Scan(&sj, &score); err != nil {
			return nil, fmt.Errorf("sqlite: related %q: %w", id, err)
		}
		var sum graph.ToolSummary
		if err := json.Unmarshal([]byte(sj), &sum); err != nil {
			return nil, fmt.Errorf("sqlite: related %q: decode: %w", id, err)
		}
		if !m.allow(&sum) {
			continue
		}
		out = append(out, graph.Hit{Tool: sum, Score: score})
		if len(out) == limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: related %q: %w", id, err)
	}
	return out, nil
}
