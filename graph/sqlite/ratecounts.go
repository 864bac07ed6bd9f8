package sqlite

import (
	"context"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.RateCounts = (*Store)(nil)

// AddRateCount implements graph.RateCounts: one immediate transaction, so
// processes sharing the file (WAL) never lose an add.
func (s *Store) AddRateCount(ctx context.Context, key string, window int64, delta int) (int64, int64, error) {
	if err := s.writable("add rate count"); err != nil {
		return 0, 0, err
	}
	if err := graph.ValidateRateKey(key); err != nil {
		return 0, 0, fmt.Errorf("sqlite: add rate count: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: add rate count: %w", err)
	}
	defer tx.Rollback()
	var cur, prev int64
	err = tx.QueryRowContext(ctx, `INSERT INTO rate_counts(key, win, n) VALUES (?, ?, ?)
ON CONFLICT(key, win) DO UPDATE SET n = n + excluded.n
RETURNING n`, key, window, delta).Scan(&cur)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: add rate count: %w", err)
	}
	err = tx.QueryRowContext(ctx, `SELECT coalesce(max(n), 0) FROM rate_counts WHERE key = ? AND win = ?`, key, window-1).Scan(&prev)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: add rate count: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("sqlite: add rate count: %w", err)
	}
	return cur, prev, nil
}

// ExpireRateCounts implements graph.RateCounts.
func (s *Store) ExpireRateCounts(ctx context.Context, before int64) (int, error) {
	if err := s.writable("expire rate counts"); err != nil {
		return 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM rate_counts WHERE win < ?`, before)
	if err != nil {
		return 0, fmt.Errorf("sqlite: expire rate counts: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
