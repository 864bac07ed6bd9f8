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

var _ graph.Gaps = (*Store)(nil)

// RecordGap implements graph.Gaps: one transaction reads, merges and writes
// the verb's gap.
func (s *Store) RecordGap(ctx context.Context, e graph.GapEvent) (graph.Gap, error) {
	if err := s.writable("record gap"); err != nil {
		return graph.Gap{}, err
	}
	if e.At.IsZero() {
		e.At = s.now()
	}
	if err := graph.ValidateGapEvent(e); err != nil {
		return graph.Gap{}, fmt.Errorf("sqlite: record gap: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return graph.Gap{}, fmt.Errorf("sqlite: record gap %q: %w", e.Verb, err)
	}
	defer tx.Rollback()
	var old graph.Gap
	var rec string
	switch err := tx.QueryRowContext(ctx, `SELECT record FROM gaps WHERE verb = ?`, e.Verb).Scan(&rec); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return graph.Gap{}, fmt.Errorf("sqlite: record gap %q: %w", e.Verb, err)
	default:
		if err := json.Unmarshal([]byte(rec), &old); err != nil {
			return graph.Gap{}, fmt.Errorf("sqlite: record gap %q: decode: %w", e.Verb, err)
		}
	}
	g, err := graph.MergeGap(old, e)
	if err != nil {
		return graph.Gap{}, fmt.Errorf("sqlite: record gap: %w", err)
	}
	if err := putGap(ctx, tx, g); err != nil {
		return graph.Gap{}, fmt.Errorf("sqlite: record gap %q: %w", g.Verb, err)
	}
	if err := tx.Commit(); err != nil {
		return graph.Gap{}, fmt.Errorf("sqlite: record gap %q: %w", g.Verb, err)
	}
	return g, nil
}

func putGap(ctx context.Context, tx *sql.Tx, g graph.Gap) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO gaps(verb, status, count, last_seen, closed_by, record) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(verb) DO UPDATE SET status = excluded.status, count = excluded.count, last_seen = excluded.last_seen,
	closed_by = excluded.closed_by, record = excluded.record`,
		g.Verb, g.Status, g.Count, graph.Nanos(g.LastSeen), g.ClosedBy, string(b))
	return err
}

// ListGaps implements graph.Gaps.
func (s *Store) ListGaps(ctx context.Context, q graph.GapQuery) ([]graph.Gap, error) {
	q, err := graph.ValidateGapQuery(q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list gaps: %w", err)
	}
	rows, err := s.query(ctx, `SELECT record FROM gaps WHERE (? = '' OR status = ?) ORDER BY count DESC, last_seen DESC, verb LIMIT ?`,
		q.Status, q.Status, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list gaps: %w", err)
	}
	defer rows.Close()
	out := []graph.Gap{}
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return nil, fmt.Errorf("sqlite: list gaps: %w", err)
		}
		var g graph.Gap
		if err := json.Unmarshal([]byte(rec), &g); err != nil {
			return nil, fmt.Errorf("sqlite: list gaps: decode: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list gaps: %w", err)
	}
	return out, nil
}

// CloseGap implements graph.Gaps.
func (s *Store) CloseGap(ctx context.Context, verb, toolID string, at time.Time) (bool, error) {
	if err := s.writable("close gap"); err != nil {
		return false, err
	}
	if at.IsZero() {
		at = s.now()
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: close gap %q: %w", verb, err)
	}
	defer tx.Rollback()
	var rec string
	switch err := tx.QueryRowContext(ctx, `SELECT record FROM gaps WHERE verb = ? AND status = ?`, verb, graph.GapOpen).Scan(&rec); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sqlite: close gap %q: %w", verb, err)
	}
	var g graph.Gap
	if err := json.Unmarshal([]byte(rec), &g); err != nil {
		return false, fmt.Errorf("sqlite: close gap %q: decode: %w", verb, err)
	}
	g = graph.ClosedGap(g, toolID, at)
	if err := putGap(ctx, tx, g); err != nil {
		return false, fmt.Errorf("sqlite: close gap %q: %w", verb, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sqlite: close gap %q: %w", verb, err)
	}
	return true, nil
}
