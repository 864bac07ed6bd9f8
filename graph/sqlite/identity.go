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
	"github.com/toolsmith/toolsmith/internal/fault"
)

var (
	_ graph.Keys  = (*Store)(nil)
	_ graph.Audit = (*Store)(nil)
)

// ---- API keys ----

// CreateKey stores a new key (its hash, never a secret).
func (s *Store) CreateKey(ctx context.Context, k graph.APIKey) error {
	if err := s.writable("create key"); err != nil {
		return err
	}
	if err := graph.ValidateKey(k); err != nil {
		return fmt.Errorf("sqlite: create key: %w", err)
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = s.now().UTC()
	}
	rec, err := json.Marshal(k)
	if err != nil {
		return fmt.Errorf("sqlite: create key %q: %w", k.ID, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err = s.db.ExecContext(ctx, `INSERT INTO api_keys(id, hash, created_at, revoked_at, record) VALUES (?, ?, ?, ?, ?)`,
		k.ID, k.Hash, graph.Nanos(k.CreatedAt), revokedNanos(k), string(rec))
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("sqlite: create key %q: already exists: %w", k.ID, fault.ErrConflict)
		}
		return fmt.Errorf("sqlite: create key %q: %w", k.ID, err)
	}
	return nil
}

func revokedNanos(k graph.APIKey) int64 {
	if k.RevokedAt.IsZero() {
		return 0
	}
	return graph.Nanos(k.RevokedAt)
}

// GetKey returns a key, revoked or not, or ErrNotFound.
func (s *Store) GetKey(ctx context.Context, id string) (graph.APIKey, error) {
	rows, err := s.query(ctx, `SELECT record FROM api_keys WHERE id = ?`, id)
	if err != nil {
		return graph.APIKey{}, fmt.Errorf("sqlite: get key %q: %w", id, err)
	}
	keys, err := scanKeys(rows)
	if err != nil {
		return graph.APIKey{}, fmt.Errorf("sqlite: get key %q: %w", id, err)
	}
	if len(keys) == 0 {
		return graph.APIKey{}, fmt.Errorf("sqlite: key %q: %w", id, fault.ErrNotFound)
	}
	return keys[0], nil
}

// ListKeys returns every key ordered by creation time, then id.
func (s *Store) ListKeys(ctx context.Context) ([]graph.APIKey, error) {
	rows, err := s.query(ctx, `SELECT record FROM api_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list keys: %w", err)
	}
	keys, err := scanKeys(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list keys: %w", err)
	}
	return keys, nil
}

func scanKeys(rows *sql.Rows) ([]graph.APIKey, error) {
	defer rows.Close()
	var out []graph.APIKey
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return nil, err
		}
		var k graph.APIKey
		if err := json.Unmarshal([]byte(rec), &k); err != nil {
			return nil, fmt.Errorf("decode key record: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokedKeys counts revoked keys (a partial index holds them).
func (s *Store) RevokedKeys(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE revoked_at > 0`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: count revoked keys: %w", err)
	}
	return n, nil
}

// RevokeKey sets RevokedAt once; revoking again keeps the first time.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if err := s.writable("revoke key"); err != nil {
		return err
	}
	if at.IsZero() {
		at = s.now()
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: revoke key %q: %w", id, err)
	}
	defer tx.Rollback()
	var rec string
	err = tx.QueryRowContext(ctx, `SELECT record FROM api_keys WHERE id = ?`, id).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: revoke key %q: %w", id, fault.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: revoke key %q: %w", id, err)
	}
	var k graph.APIKey
	if err := json.Unmarshal([]byte(rec), &k); err != nil {
		return fmt.Errorf("sqlite: revoke key %q: decode: %w", id, err)
	}
	if !k.RevokedAt.IsZero() {
		return nil
	}
	k.RevokedAt = at.UTC()
	b, err := json.Marshal(k)
	if err != nil {
		return fmt.Errorf("sqlite: revoke key %q: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ?, record = ? WHERE id = ?`, graph.Nanos(k.RevokedAt), string(b), id); err != nil {
		return fmt.Errorf("sqlite: revoke key %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: revoke key %q: %w", id, err)
	}
	return nil
}

// ---- audit log ----

// AppendAudit stores events atomically (all or none).
func (s *Store) AppendAudit(ctx context.Context, events []graph.AuditEvent) error {
	if err := s.writable("append audit"); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	recs := make([]string, len(events))
	for i, e := range events {
		if err := graph.ValidateAuditEvent(e); err != nil {
			return fmt.Errorf("sqlite: append audit: event %d: %w", i, err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("sqlite: append audit: event %d: %w", i, err)
		}
		recs[i] = string(b)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: append audit: %w", err)
	}
	defer tx.Rollback()
	for i, e := range events {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_events(id, at, actor, action, tool, record) VALUES (?, ?, ?, ?, ?, ?)`,
			e.ID, graph.Nanos(e.At), e.Actor, e.Action, e.Tool, recs[i])
		if err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("sqlite: append audit: event %q: already exists: %w", e.ID, fault.ErrConflict)
			}
			return fmt.Errorf("sqlite: append audit: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: append audit: %w", err)
	}
	return nil
}

// AuditEvents returns matching events, newest (largest ID) first.
func (s *Store) AuditEvents(ctx context.Context, q graph.AuditQuery) (graph.AuditPage, error) {
	limit := graph.AuditLimit(q.Limit)
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if q.Actor != "" {
		add("actor = ?", q.Actor)
	}
	if q.Action != "" {
		add("action = ?", q.Action)
	}
	if q.Tool != "" {
		add("tool = ?", q.Tool)
	}
	if !q.Since.IsZero() {
		add("at >= ?", graph.Nanos(q.Since))
	}
	if !q.Until.IsZero() {
		add("at < ?", graph.Nanos(q.Until))
	}
	if q.Before != "" {
		add("id < ?", q.Before)
	}
	sqlText := `SELECT record FROM audit_events`
	if len(where) > 0 {
		sqlText += ` WHERE ` + strings.Join(where, " AND ")
	}
	sqlText += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return graph.AuditPage{}, fmt.Errorf("sqlite: audit events: %w", err)
	}
	defer rows.Close()
	page := graph.AuditPage{Items: []graph.AuditEvent{}}
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return graph.AuditPage{}, fmt.Errorf("sqlite: audit events: %w", err)
		}
		var e graph.AuditEvent
		if err := json.Unmarshal([]byte(rec), &e); err != nil {
			return graph.AuditPage{}, fmt.Errorf("sqlite: audit events: decode: %w", err)
		}
		page.Items = append(page.Items, e)
	}
	if err := rows.Err(); err != nil {
		return graph.AuditPage{}, fmt.Errorf("sqlite: audit events: %w", err)
	}
	if len(page.Items) > limit {
		page.Items = page.Items[:limit]
		page.Next = page.Items[limit-1].ID
	}
	return page, nil
}

// isBusy reports SQLITE_BUSY (5) and its extended codes.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// isUniqueViolation reports a primary-key or unique constraint failure.
func isUniqueViolation(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		// SQLITE_CONSTRAINT_PRIMARYKEY (1555) or SQLITE_CONSTRAINT_UNIQUE (2067).
		return coded.Code() == 1555 || coded.Code() == 2067
	}
	return false
}
