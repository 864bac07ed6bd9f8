package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.Pairings = (*Store)(nil)

// LearnPairs implements graph.Pairings in one transaction.
func (s *Store) LearnPairs(ctx context.Context, evidence []graph.PairEvidence) error {
	if err := s.writable("learn pairs"); err != nil {
		return err
	}
	for _, e := range evidence {
		if _, _, err := graph.OrderPair(e); err != nil {
			return fmt.Errorf("sqlite: learn pairs: %w", err)
		}
	}
	if len(evidence) == 0 {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: learn pairs: %w", err)
	}
	defer tx.Rollback()
	for _, e := range evidence {
		a, b, _ := graph.OrderPair(e)
		at := e.At
		if at.IsZero() {
			at = s.now()
		}
		// A pair counts once per caller's session: a session repeated
		// cannot inflate it.
		res, err := tx.ExecContext(ctx, `INSERT INTO learned_pair_sessions(a, b, caller, session, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			a, b, e.Caller, e.Session, graph.Nanos(at))
		if err != nil {
			return fmt.Errorf("sqlite: learn pairs: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: learn pairs: %w", err)
		} else if n == 0 {
			continue
		}
		var sessions int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM learned_pair_sessions WHERE a = ? AND b = ? AND caller = ?`, a, b, e.Caller).Scan(&sessions); err != nil {
			return fmt.Errorf("sqlite: learn pairs: %w", err)
		}
		newCaller := 0
		if sessions == 1 {
			newCaller = 1
		}
		var w float64
		var n, callers int
		var updated int64
		switch err := tx.QueryRowContext(ctx, `SELECT weight, count, callers, updated_at FROM learned_pairs WHERE a = ? AND b = ?`, a, b).Scan(&w, &n, &callers, &updated); {
		case errors.Is(err, sql.ErrNoRows):
			updated = graph.Nanos(at)
		case err != nil:
			return fmt.Errorf("sqlite: learn pairs: %w", err)
		}
		last := time.Unix(0, updated)
		w = graph.DecayPair(w, last, at) + 1
		if at.Before(last) {
			at = last // late evidence counts, without moving time back
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO learned_pairs(a, b, weight, count, callers, updated_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(a, b) DO UPDATE SET weight = excluded.weight, count = excluded.count, callers = excluded.callers, updated_at = excluded.updated_at`,
			a, b, w, n+1, callers+newCaller, graph.Nanos(at)); err != nil {
			return fmt.Errorf("sqlite: learn pairs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: learn pairs: %w", err)
	}
	return nil
}

// learnedPairsSQL selects a tool's learned partners (four arguments: the
// id and graph.PairQuorum, twice) that pass where (on tools t). CROSS JOIN
// keeps the edges the outer loop: otherwise SQLite may walk every active
// tool by the status index and probe the edges for each (plan_test.go
// checks).
func learnedPairsSQL(where string) string {
	return `SELECT t.summary, e.weight, e.updated_at FROM (
		SELECT b AS peer, weight, updated_at FROM learned_pairs WHERE a = ? AND callers >= ?
		UNION ALL
		SELECT a AS peer, weight, updated_at FROM learned_pairs WHERE b = ? AND callers >= ?
	) AS e CROSS JOIN tools t ON t.id = e.peer WHERE ` + where
}

// LearnedPairs implements graph.Pairings.
func (s *Store) LearnedPairs(ctx context.Context, id string, limit int, f graph.Filter, asOf time.Time) ([]graph.Hit, error) {
	limit = graph.Limit(limit, graph.DefaultRelatedLimit, 0)
	if asOf.IsZero() {
		asOf = s.now()
	}
	where, args := filterSQL(f, "t")
	rows, err := s.db.QueryContext(ctx, learnedPairsSQL(where), append([]any{id, graph.PairQuorum, id, graph.PairQuorum}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: learned pairs of %q: %w", id, err)
	}
	defer rows.Close()
	m := newMatcher(f)
	out := []graph.Hit{}
	for rows.Next() {
		var sj string
		var w float64
		var updated int64
		if err := rows.Scan(&sj, &w, &updated); err != nil {
			return nil, fmt.Errorf("sqlite: learned pairs of %q: %w", id, err)
		}
		var sum graph.ToolSummary
		if err := json.Unmarshal([]byte(sj), &sum); err != nil {
			return nil, fmt.Errorf("sqlite: learned pairs of %q: decode: %w", id, err)
		}
		if !m.allow(&sum) {
			continue
		}
		out = append(out, graph.Hit{Tool: sum, Score: graph.DecayPair(w, time.Unix(0, updated), asOf)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: learned pairs of %q: %w", id, err)
	}
	graph.SortHits(out)
	return out[:min(limit, len(out))], nil
}
