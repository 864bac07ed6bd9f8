package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.Series = (*Store)(nil)

// AddSeriesPoints implements graph.Series.
func (s *Store) AddSeriesPoints(ctx context.Context, pts []graph.SeriesPoint) error {
	if err := s.writable("add series points"); err != nil {
		return err
	}
	for i, p := range pts {
		if err := graph.ValidatePoint(p); err != nil {
			return fmt.Errorf("sqlite: add series points: point %d: %w", i, err)
		}
	}
	if len(pts) == 0 {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: add series points: %w", err)
	}
	defer tx.Rollback()
	if err := addPoints(ctx, tx, pts); err != nil {
		return fmt.Errorf("sqlite: add series points: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: add series points: %w", err)
	}
	return nil
}

// addPoints adds each point into its row inside tx.
func addPoints(ctx context.Context, tx *sql.Tx, pts []graph.SeriesPoint) error {
	for _, p := range pts {
		p.At = p.At.UTC()
		var count, sum float64
		var hist sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT count, sum, hist FROM series_points WHERE series = ? AND res = ? AND at = ?`,
			p.Series, p.Res, graph.Nanos(p.At)).Scan(&count, &sum, &hist)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			old := graph.SeriesPoint{Series: p.Series, Res: p.Res, At: p.At, Count: count, Sum: sum}
			if hist.Valid {
				if err := json.Unmarshal([]byte(hist.String), &old.Hist); err != nil {
					return fmt.Errorf("point %s %s: decode hist: %w", p.Series, p.At, err)
				}
			}
			p = old.Merge(p)
		}
		var h any
		if p.Hist != nil {
			b, _ := json.Marshal(p.Hist)
			h = string(b)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO series_points(series, res, at, count, sum, hist) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT(series, res, at) DO UPDATE SET count = excluded.count, sum = excluded.sum, hist = excluded.hist`,
			p.Series, p.Res, graph.Nanos(p.At), p.Count, p.Sum, h); err != nil {
			return err
		}
	}
	return nil
}

// SeriesPoints implements graph.Series.
func (s *Store) SeriesPoints(ctx context.Context, q graph.SeriesQuery) ([]graph.SeriesPoint, error) {
	return seriesPoints(ctx, s.db, q)
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func seriesPoints(ctx context.Context, db queryer, q graph.SeriesQuery) ([]graph.SeriesPoint, error) {
	q.Limit = graph.Limit(q.Limit, graph.DefaultSeriesLimit, 0)
	where := []string{"res = ?"}
	args := []any{q.Res}
	if len(q.Series) > 0 {
		where = append(where, "series IN ("+strings.TrimSuffix(strings.Repeat("?,", len(q.Series)), ",")+")")
		for _, n := range q.Series {
			args = append(args, n)
		}
	}
	if q.Prefix != "" {
		where = append(where, "substr(series, 1, ?) = ?")
		args = append(args, len(q.Prefix), q.Prefix)
	}
	if !q.Since.IsZero() {
		where = append(where, "at >= ?")
		args = append(args, graph.Nanos(q.Since))
	}
	if !q.Until.IsZero() {
		where = append(where, "at < ?")
		args = append(args, graph.Nanos(q.Until))
	}
	args = append(args, q.Limit)
	rows, err := db.QueryContext(ctx, `SELECT series, res, at, count, sum, hist FROM series_points WHERE `+strings.Join(where, " AND ")+
		` ORDER BY series, at LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: series points: %w", err)
	}
	defer rows.Close()
	var out []graph.SeriesPoint
	for rows.Next() {
		var p graph.SeriesPoint
		var at int64
		var hist sql.NullString
		if err := rows.Scan(&p.Series, &p.Res, &at, &p.Count, &p.Sum, &hist); err != nil {
			return nil, fmt.Errorf("sqlite: series points: %w", err)
		}
		p.At = graph.FromNanos(at)
		if hist.Valid {
			if err := json.Unmarshal([]byte(hist.String), &p.Hist); err != nil {
				return nil, fmt.Errorf("sqlite: series points: decode hist: %w", err)
			}
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: series points: %w", err)
	}
	return out, nil
}

// CompactSeries implements graph.Series.
func (s *Store) CompactSeries(ctx context.Context, now time.Time, r graph.Retention) (int, error) {
	if err := s.writable("compact series"); err != nil {
		return 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sqlite: compact series: %w", err)
	}
	defer tx.Rollback()
	removed := 0
	for _, step := range graph.CompactSteps(now, r) {
		if step.To != "" {
			old, err := seriesPoints(ctx, tx, graph.SeriesQuery{Res: step.From, Until: step.Before, Limit: 1 << 30})
			if err != nil {
				return 0, err
			}
			if err := addPoints(ctx, tx, graph.RollUp(old, step.To)); err != nil {
				return 0, fmt.Errorf("sqlite: compact series: %w", err)
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM series_points WHERE res = ? AND at < ?`, step.From, graph.Nanos(step.Before))
		if err != nil {
			return 0, fmt.Errorf("sqlite: compact series: %w", err)
		}
		n, _ := res.RowsAffected()
		removed += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("sqlite: compact series: %w", err)
	}
	return removed, nil
}
