package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.Notices = (*Store)(nil)

// PostNotice implements graph.Notices. SQLite's one writer makes seq (the
// row id, never reused) the order of the commits.
func (s *Store) PostNotice(ctx context.Context, n graph.Notice, keep int) (graph.Notice, error) {
	if err := s.writable("post notice"); err != nil {
		return n, err
	}
	if err := graph.ValidateNotice(n); err != nil {
		return n, fmt.Errorf("sqlite: post notice: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return n, fmt.Errorf("sqlite: post notice: %w", err)
	}
	defer tx.Rollback()
	if err := insertNotice(ctx, tx, &n, s.now()); err != nil {
		return n, fmt.Errorf("sqlite: post notice: %w", err)
	}
	if err := trimNotices(ctx, tx, n.Topic, keep); err != nil {
		return n, fmt.Errorf("sqlite: post notice: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return n, fmt.Errorf("sqlite: post notice: %w", err)
	}
	return n, nil
}

// insertNotice stores n with the next seq (set in n); a zero At is now.
func insertNotice(ctx context.Context, tx *sql.Tx, n *graph.Notice, now time.Time) error {
	if n.At.IsZero() {
		n.At = now
	}
	n.At = n.At.UTC()
	res, err := tx.ExecContext(ctx, `INSERT INTO notices(topic, at, data) VALUES (?, ?, ?)`, n.Topic, graph.Nanos(n.At), string(n.Data))
	if err != nil {
		return err
	}
	n.Seq, err = res.LastInsertId()
	return err
}

// trimNotices drops topic's notices beyond its newest keep.
func trimNotices(ctx context.Context, tx *sql.Tx, topic string, keep int) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM notices WHERE topic = ? AND seq <= (
	SELECT seq FROM notices WHERE topic = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`, topic, topic, graph.NoticeKeep(keep))
	return err
}

// ImportNotices implements graph.Notices.
func (s *Store) ImportNotices(ctx context.Context, source string, ns []graph.Notice, keep int) (bool, error) {
	if err := s.writable("import notices"); err != nil {
		return false, err
	}
	if source == "" {
		return false, fmt.Errorf("sqlite: import notices: source is required: %w", fault.ErrInvalid)
	}
	for i, n := range ns {
		if err := graph.ValidateNotice(n); err != nil {
			return false, fmt.Errorf("sqlite: import notices: notice %d: %w", i, err)
		}
	}
	return s.importOnce(ctx, "import notices",
		`INSERT INTO notice_imports(source, at, notices) VALUES (?, ?, ?) ON CONFLICT(source) DO NOTHING`, source, len(ns),
		func(tx *sql.Tx) error {
			topics := map[string]bool{}
			for i := range ns {
				n := ns[i]
				if err := insertNotice(ctx, tx, &n, s.now()); err != nil {
					return err
				}
				topics[n.Topic] = true
			}
			for topic := range topics {
				if err := trimNotices(ctx, tx, topic, keep); err != nil {
					return err
				}
			}
			return nil
		})
}

// LatestNotices implements graph.Notices.
func (s *Store) LatestNotices(ctx context.Context, topic string, limit int) ([]graph.Notice, error) {
	out, err := s.notices(ctx, `SELECT seq, topic, at, data FROM notices WHERE topic = ? ORDER BY seq DESC LIMIT ?`, topic, graph.NoticeLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: latest notices: %w", err)
	}
	return out, nil
}

// NoticesAfter implements graph.Notices.
func (s *Store) NoticesAfter(ctx context.Context, topic string, after int64, limit int) ([]graph.Notice, error) {
	out, err := s.notices(ctx, `SELECT seq, topic, at, data FROM notices WHERE topic = ? AND seq > ? ORDER BY seq LIMIT ?`, topic, after, graph.NoticeLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: notices after: %w", err)
	}
	return out, nil
}

func (s *Store) notices(ctx context.Context, q string, args ...any) ([]graph.Notice, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []graph.Notice
	for rows.Next() {
		var n graph.Notice
		var at int64
		var data string
		if err := rows.Scan(&n.Seq, &n.Topic, &at, &data); err != nil {
			return nil, err
		}
		n.At, n.Data = graph.FromNanos(at), []byte(data)
		out = append(out, n)
	}
	return out, rows.Err()
}

// ClaimSpan implements graph.Notices. The transaction holds the file's
// write lock from the read to the write, so two processes never both move
// the mark past the same time.
func (s *Store) ClaimSpan(ctx context.Context, name string, until time.Time) (time.Time, bool, error) {
	if err := s.writable("claim span"); err != nil {
		return time.Time{}, false, err
	}
	if name == "" {
		return time.Time{}, false, fmt.Errorf("sqlite: claim span: name is required: %w", fault.ErrInvalid)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: claim span %q: %w", name, err)
	}
	defer tx.Rollback()
	var prev time.Time
	var at int64
	switch err := tx.QueryRowContext(ctx, `SELECT at FROM span_marks WHERE name = ?`, name).Scan(&at); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return time.Time{}, false, fmt.Errorf("sqlite: claim span %q: %w", name, err)
	default:
		prev = graph.FromNanos(at)
		if !prev.Before(until) {
			return prev, false, nil
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO span_marks(name, at) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET at = excluded.at`,
		name, graph.Nanos(until)); err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: claim span %q: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return time.Time{}, false, fmt.Errorf("sqlite: claim span %q: %w", name, err)
	}
	return prev, true, nil
}
