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

var _ graph.Sessions = (*Store)(nil)

// PutSession implements graph.Sessions.
func (s *Store) PutSession(ctx context.Context, cs graph.ConsoleSession) error {
	if err := s.writable("put session"); err != nil {
		return err
	}
	if err := graph.ValidateSession(cs); err != nil {
		return fmt.Errorf("sqlite: put session: %w", err)
	}
	if cs.CreatedAt.IsZero() {
		cs.CreatedAt = s.now().UTC()
	}
	cs.CreatedAt, cs.ExpiresAt = cs.CreatedAt.UTC(), cs.ExpiresAt.UTC()
	rec, err := json.Marshal(cs)
	if err != nil {
		return fmt.Errorf("sqlite: put session: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO console_sessions(id, expires_at, record, flash) VALUES (?, ?, ?, ?)`,
		cs.ID, graph.Nanos(cs.ExpiresAt), string(rec), flashValue(cs.Flash)); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("sqlite: put session: %w", graph.ErrConflict)
		}
		return fmt.Errorf("sqlite: put session: %w", err)
	}
	return nil
}

// GetSession implements graph.Sessions. The expiry column is the
// authority: the record's copy is replaced by it.
func (s *Store) GetSession(ctx context.Context, id string) (graph.ConsoleSession, error) {
	var rec string
	var exp int64
	var flash []byte
	err := s.db.QueryRowContext(ctx, `SELECT record, expires_at, flash FROM console_sessions WHERE id = ?`, id).Scan(&rec, &exp, &flash)
	if errors.Is(err, sql.ErrNoRows) {
		return graph.ConsoleSession{}, fmt.Errorf("sqlite: session: %w", graph.ErrNotFound)
	}
	if err != nil {
		return graph.ConsoleSession{}, fmt.Errorf("sqlite: get session: %w", err)
	}
	var cs graph.ConsoleSession
	if err := json.Unmarshal([]byte(rec), &cs); err != nil {
		return graph.ConsoleSession{}, fmt.Errorf("sqlite: decode session: %w", err)
	}
	cs.ExpiresAt = graph.FromNanos(exp)
	if len(flash) > 0 {
		cs.Flash = flash
	}
	return cs, nil
}

// flashValue is a flash as its column holds it (NULL for none).
func flashValue(flash []byte) any {
	if len(flash) == 0 {
		return nil
	}
	return flash
}

// SetSessionFlash implements graph.Sessions.
func (s *Store) SetSessionFlash(ctx context.Context, id string, flash []byte) error {
	if err := s.writable("set session flash"); err != nil {
		return err
	}
	if err := graph.ValidateFlash(flash); err != nil {
		return fmt.Errorf("sqlite: set session flash: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `UPDATE console_sessions SET flash = ? WHERE id = ?`, flashValue(flash), id)
	if err != nil {
		return fmt.Errorf("sqlite: set session flash: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: set session flash: %w", err)
	} else if n == 0 {
		return fmt.Errorf("sqlite: set session flash: %w", graph.ErrNotFound)
	}
	return nil
}

// TouchSession implements graph.Sessions.
func (s *Store) TouchSession(ctx context.Context, id string, expiresAt time.Time) error {
	if err := s.writable("touch session"); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `UPDATE console_sessions SET expires_at = ? WHERE id = ?`, graph.Nanos(expiresAt), id)
	if err != nil {
		return fmt.Errorf("sqlite: touch session: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: touch session: %w", err)
	} else if n == 0 {
		return fmt.Errorf("sqlite: touch session: %w", graph.ErrNotFound)
	}
	return nil
}

// DeleteSession implements graph.Sessions.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := s.writable("delete session"); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM console_sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("sqlite: delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions implements graph.Sessions.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error) {
	if err := s.writable("delete expired sessions"); err != nil {
		return 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM console_sessions WHERE expires_at <= ?`, graph.Nanos(now))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired sessions: %w", err)
	}
	return int(n), nil
}
