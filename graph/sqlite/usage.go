package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.RunClaims = (*Store)(nil)

// RecordUsage applies events in one transaction: counts, session history and
// usage centroids. An unknown tool or a wrong embedding dimension rejects the
// whole batch.
func (s *Store) RecordUsage(ctx context.Context, events []graph.UsageEvent) error {
	if err := s.writable("record usage"); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	for _, e := range events {
		if e.ToolID == "" {
			return fmt.Errorf("sqlite: record usage: empty tool id: %w", fault.ErrInvalid)
		}
		if e.QueryEmbedding != nil {
			if err := s.checkDim(fmt.Sprintf("record usage of %q", e.ToolID), e.QueryEmbedding); err != nil {
				return err
			}
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: record usage: %w", err)
	}
	defer tx.Rollback()
	now := s.now().UTC()
	type acc struct {
		sum []float32
		n   int
	}
	centroids := map[string]*acc{}
	for _, e := range events {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM tools WHERE id = ?`, e.ToolID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: record usage of %q: %w", e.ToolID, fault.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sqlite: record usage of %q: %w", e.ToolID, err)
		}
		at := e.At
		if at.IsZero() {
			at = now
		}
		succ := 0
		if e.Success {
			succ = 1
		}
		var qvec []byte
		if e.Success && e.QueryEmbedding != nil {
			qvec = encodeVec(e.QueryEmbedding)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage_events(tool_id, session_id, user_id, query, success, latency_ms, at, query_vec, origin) VALUES (?,?,?,?,?,?,?,?,?)`,
			e.ToolID, e.SessionID, e.UserID, e.Query, succ, e.LatencyMs, graph.Nanos(at), qvec, e.Origin); err != nil {
			return fmt.Errorf("sqlite: record usage of %q: %w", e.ToolID, err)
		}
		c := centroids[e.ToolID]
		if c == nil {
			c = &acc{}
			var blob []byte
			err := tx.QueryRowContext(ctx, `SELECT centroid_sum, centroid_n FROM usage WHERE tool_id = ?`, e.ToolID).Scan(&blob, &c.n)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("sqlite: record usage of %q: %w", e.ToolID, err)
			}
			if blob != nil {
				c.sum = decodeVec(blob)
			}
			centroids[e.ToolID] = c
		}
		if e.Success && e.QueryEmbedding != nil {
			if c.sum == nil {
				c.sum = make([]float32, len(e.QueryEmbedding))
			}
			for i, x := range e.QueryEmbedding {
				c.sum[i] += x
			}
			c.n++
		}
		var blob []byte
		if c.sum != nil {
			blob = encodeVec(c.sum)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage(tool_id, uses, successes, last_used, centroid_sum, centroid_n) VALUES (?,1,?,?,?,?)
			ON CONFLICT(tool_id) DO UPDATE SET uses = uses + 1, successes = successes + excluded.successes,
				last_used = max(last_used, excluded.last_used), centroid_sum = excluded.centroid_sum, centroid_n = excluded.centroid_n`,
			e.ToolID, succ, graph.Nanos(at), blob, c.n); err != nil {
			return fmt.Errorf("sqlite: record usage of %q: %w", e.ToolID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: record usage: commit: %w", err)
	}
	// Only now, with the data durable, does search see the new evidence.
	ids := make([]string, 0, len(centroids))
	for id := range centroids {
		ids = append(ids, id)
	}
	if err := s.loadUsage(ctx, ids); err != nil {
		return fmt.Errorf("sqlite: record usage: committed, but %w", err)
	}
	return nil
}

// loadUsage copies the usage rows of ids (every row when ids is nil) into
// the memory index.
func (s *Store) loadUsage(ctx context.Context, ids []string) error {
	q, args := `SELECT tool_id, uses, successes, last_used, centroid_sum, centroid_n FROM usage`, []any{}
	if ids != nil {
		js, err := json.Marshal(ids)
		if err != nil {
			return fmt.Errorf("load usage: %w", err)
		}
		q += ` WHERE tool_id IN (SELECT value FROM json_each(?))`
		args = append(args, string(js))
	}
	rows, err := s.db.QueryContext(context.WithoutCancel(ctx), q, args...)
	if err != nil {
		return fmt.Errorf("load usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u graph.Usage
		var last int64
		var blob []byte
		if err := rows.Scan(&u.ToolID, &u.Uses, &u.Successes, &last, &blob, &u.CentroidN); err != nil {
			return fmt.Errorf("load usage: %w", err)
		}
		u.LastUsed = graph.FromNanos(last)
		var centroid []float32
		if u.CentroidN > 0 && blob != nil {
			centroid = graph.Normalize(decodeVec(blob))
		}
		s.mem.setUsage(u, centroid)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load usage: %w", err)
	}
	return nil
}

// Usage returns the usage evidence of the given tools; tools never used are
// absent from the map. It is answered from the memory index, which
// RecordUsage updates after each commit.
func (s *Store) Usage(ctx context.Context, ids []string) (map[string]graph.Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: usage: %w", err)
	}
	out := make(map[string]graph.Usage, len(ids))
	for _, id := range ids {
		if u, ok := s.mem.usageOf(id); ok {
			out[id] = u
		}
	}
	return out, nil
}

// ServedQueries returns the latest successful events with a query text,
// newest first; limit <= 0 means 100.
func (s *Store) ServedQueries(ctx context.Context, limit int) ([]graph.ServedQuery, error) {
	limit = graph.Limit(limit, graph.DefaultEventsLimit, 0)
	return s.servedQueries(ctx, "served queries", `SELECT id, tool_id, query, at, query_vec FROM usage_events WHERE success AND query <> '' ORDER BY at DESC, id DESC LIMIT ?`, limit)
}

// ServedQueriesAfter returns the served queries after Seq after, oldest
// first (see graph.Store). Seq is the event's rowid: events are never
// deleted and one writer at a time appends them, so rowids only grow and a
// reader sees them in that order.
func (s *Store) ServedQueriesAfter(ctx context.Context, after int64, limit int) ([]graph.ServedQuery, error) {
	limit = graph.Limit(limit, graph.DefaultEventsLimit, 0)
	return s.servedQueries(ctx, "served queries after", `SELECT id, tool_id, query, at, query_vec FROM usage_events WHERE id > ? AND success AND query <> '' ORDER BY id LIMIT ?`, after, limit)
}

func (s *Store) servedQueries(ctx context.Context, op, query string, args ...any) ([]graph.ServedQuery, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	defer rows.Close()
	out := []graph.ServedQuery{}
	for rows.Next() {
		var q graph.ServedQuery
		var at int64
		var vec []byte
		if err := rows.Scan(&q.Seq, &q.ToolID, &q.Query, &at, &vec); err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", op, err)
		}
		q.At = graph.FromNanos(at)
		if vec != nil {
			q.Embedding = decodeVec(vec)
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return out, nil
}

// SessionHistory returns a session's events, newest first; limit <= 0 means 100.
func (s *Store) SessionHistory(ctx context.Context, sessionID string, limit int) ([]graph.SessionEvent, error) {
	limit = graph.Limit(limit, graph.DefaultEventsLimit, 0)
	rows, err := s.db.QueryContext(ctx, `SELECT tool_id, user_id, success, at FROM usage_events WHERE session_id = ? ORDER BY at DESC, id DESC LIMIT ?`, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: session history %q: %w", sessionID, err)
	}
	defer rows.Close()
	out := []graph.SessionEvent{}
	for rows.Next() {
		var e graph.SessionEvent
		var at int64
		if err := rows.Scan(&e.ToolID, &e.UserID, &e.Success, &at); err != nil {
			return nil, fmt.Errorf("sqlite: session history %q: %w", sessionID, err)
		}
		e.At = graph.FromNanos(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: session history %q: %w", sessionID, err)
	}
	return out, nil
}

// ClaimRuns marks up to c.N of the user's unclaimed observed runs of the
// tool since c.Since as backing a report, oldest first (see
// graph.RunClaims). The select and the update run in one transaction under
// the store's writer lock, so concurrent claims never share a run.
func (s *Store) ClaimRuns(ctx context.Context, c graph.RunClaim) (int, error) {
	if c.UserID == "" || c.ToolID == "" || c.N <= 0 {
		return 0, nil
	}
	if err := s.writable("claim runs"); err != nil {
		return 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	minSuccess := 0
	if c.Successful {
		minSuccess = 1
	}
	res, err := s.db.ExecContext(ctx, `UPDATE usage_events SET claimed = 1 WHERE id IN (
		SELECT id FROM usage_events
		WHERE origin = 'observed' AND user_id = ? AND tool_id = ? AND at >= ? AND claimed = 0 AND success >= ?
		ORDER BY at, id LIMIT ?)`,
		c.UserID, c.ToolID, graph.Nanos(c.Since), minSuccess, c.N)
	if err != nil {
		return 0, fmt.Errorf("sqlite: claim runs of %q by %q: %w", c.ToolID, c.UserID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: claim runs of %q by %q: %w", c.ToolID, c.UserID, err)
	}
	return int(n), nil
}
