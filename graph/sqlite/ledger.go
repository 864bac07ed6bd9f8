package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.CallLedger = (*Store)(nil)

// ReserveCall implements graph.CallLedger. The transaction is immediate:
// it holds the database's write lock from the tally to the insert, which
// excludes every other writer, in this process or another over the file.
func (s *Store) ReserveCall(ctx context.Context, r graph.CallRecord, since []time.Time, check func(graph.CallTally) error) (graph.CallRecord, graph.CallTally, error) {
	var tally graph.CallTally
	if err := s.writable("reserve call"); err != nil {
		return r, tally, err
	}
	if err := graph.ValidateCall(r); err != nil {
		return r, tally, fmt.Errorf("sqlite: reserve call: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return r, tally, fmt.Errorf("sqlite: reserve call: %w", err)
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, `SELECT coalesce(max(spent), 0) FROM call_ledgers WHERE approval_id = ?`, r.ApprovalID).Scan(&tally.Spent)
	if err != nil {
		return r, tally, fmt.Errorf("sqlite: reserve call: %w", err)
	}
	tally.Calls = make([]int, len(since))
	for i, t := range since {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM calls WHERE approval_id = ? AND at >= ?`, r.ApprovalID, graph.Nanos(t)).Scan(&tally.Calls[i]); err != nil {
			return r, tally, fmt.Errorf("sqlite: reserve call: %w", err)
		}
	}
	if err := check(tally); err != nil {
		return r, tally, err
	}
	if err := insertCall(ctx, tx, &r); err != nil {
		return r, tally, fmt.Errorf("sqlite: reserve call: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return r, tally, fmt.Errorf("sqlite: reserve call: %w", err)
	}
	return r, tally, nil
}

// insertCall stores r with a new ID (set in r) and adds its cost to its
// approval's spent total.
func insertCall(ctx context.Context, tx *sql.Tx, r *graph.CallRecord) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO calls(approval_id, at, cost, record) VALUES (?, ?, ?, '')`, r.ApprovalID, graph.Nanos(r.At), r.Cost)
	if err != nil {
		return err
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	rec, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE calls SET record = ? WHERE id = ?`, string(rec), r.ID); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO call_ledgers(approval_id, spent) VALUES (?, ?)
ON CONFLICT(approval_id) DO UPDATE SET spent = spent + excluded.spent`, r.ApprovalID, r.Cost)
	return err
}

// CompleteCall implements graph.CallLedger.
func (s *Store) CompleteCall(ctx context.Context, r graph.CallRecord) error {
	if err := s.writable("complete call"); err != nil {
		return err
	}
	rec, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("sqlite: complete call %d: %w", r.ID, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: complete call %d: %w", r.ID, err)
	}
	defer tx.Rollback()
	var approval string
	var old float64
	err = tx.QueryRowContext(ctx, `SELECT approval_id, cost FROM calls WHERE id = ?`, r.ID).Scan(&approval, &old)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: complete call %d: %w", r.ID, fault.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: complete call %d: %w", r.ID, err)
	}
	if approval != r.ApprovalID {
		return fmt.Errorf("sqlite: complete call %d: it belongs to approval %q, not %q: %w", r.ID, approval, r.ApprovalID, fault.ErrInvalid)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE calls SET at = ?, cost = ?, record = ? WHERE id = ?`, graph.Nanos(r.At), r.Cost, string(rec), r.ID); err != nil {
		return fmt.Errorf("sqlite: complete call %d: %w", r.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE call_ledgers SET spent = spent + ? WHERE approval_id = ?`, r.Cost-old, approval); err != nil {
		return fmt.Errorf("sqlite: complete call %d: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: complete call %d: %w", r.ID, err)
	}
	return nil
}

// CallRecords implements graph.CallLedger.
func (s *Store) CallRecords(ctx context.Context, approvalID string, limit int) ([]graph.CallRecord, error) {
	rows, err := s.query(ctx, `SELECT record FROM calls WHERE approval_id = ? ORDER BY id LIMIT ?`, approvalID, graph.CallLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: call records: %w", err)
	}
	defer rows.Close()
	var out []graph.CallRecord
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return nil, fmt.Errorf("sqlite: call records: %w", err)
		}
		var r graph.CallRecord
		if err := json.Unmarshal([]byte(rec), &r); err != nil {
			return nil, fmt.Errorf("sqlite: call records: decode: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ImportCalls implements graph.CallLedger.
func (s *Store) ImportCalls(ctx context.Context, source string, recs []graph.CallRecord) (bool, error) {
	if err := s.writable("import calls"); err != nil {
		return false, err
	}
	if source == "" {
		return false, fmt.Errorf("sqlite: import calls: source is required: %w", fault.ErrInvalid)
	}
	for i, r := range recs {
		if err := graph.ValidateCall(r); err != nil {
			return false, fmt.Errorf("sqlite: import calls: record %d: %w", i, err)
		}
	}
	return s.importOnce(ctx, "import calls",
		`INSERT INTO call_imports(source, at, calls) VALUES (?, ?, ?) ON CONFLICT(source) DO NOTHING`, source, len(recs),
		func(tx *sql.Tx) error {
			for i := range recs {
				r := recs[i]
				if err := insertCall(ctx, tx, &r); err != nil {
					return err
				}
			}
			return nil
		})
}

// importOnce inserts a source's import marker with marker (an INSERT of
// source, time and count that does nothing when the source is there) and,
// only when it is new, runs insert in the same transaction: a source is
// imported once, and a failed insert leaves no marker. It reports whether
// this call imported.
func (s *Store) importOnce(ctx context.Context, what, marker, source string, count int, insert func(tx *sql.Tx) error) (bool, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, marker, source, graph.Nanos(s.now()), count)
	if err != nil {
		return false, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if err := insert(tx); err != nil {
		return false, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return true, nil
}
