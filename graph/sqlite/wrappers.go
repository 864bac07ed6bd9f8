package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.WrapperApprovals = (*Store)(nil)

// PutWrapperApproval implements graph.WrapperApprovals.
func (s *Store) PutWrapperApproval(ctx context.Context, a graph.WrapperApproval) error {
	if err := s.writable("put wrapper approval"); err != nil {
		return err
	}
	if err := graph.ValidateWrapperApproval(a); err != nil {
		return fmt.Errorf("sqlite: put wrapper approval: %w", err)
	}
	if a.UpdatedAt.IsZero() {
		a.UpdatedAt = s.now()
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO wrapper_approvals(slug, approval_id, spec_hash, spec, record, updated_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(slug) DO UPDATE SET approval_id = excluded.approval_id, spec_hash = excluded.spec_hash, spec = excluded.spec,
  record = excluded.record, updated_at = excluded.updated_at`,
		a.Slug, a.ApprovalID, a.SpecHash, a.Spec, string(a.Record), graph.Nanos(a.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlite: put wrapper approval %q: %w", a.Slug, err)
	}
	return nil
}

// GetWrapperApproval implements graph.WrapperApprovals.
func (s *Store) GetWrapperApproval(ctx context.Context, slug string) (graph.WrapperApproval, error) {
	a := graph.WrapperApproval{Slug: slug}
	var rec string
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT approval_id, spec_hash, spec, record, updated_at FROM wrapper_approvals WHERE slug = ?`, slug).
		Scan(&a.ApprovalID, &a.SpecHash, &a.Spec, &rec, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("sqlite: wrapper approval %q: %w", slug, fault.ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("sqlite: wrapper approval %q: %w", slug, err)
	}
	a.Record, a.UpdatedAt = []byte(rec), graph.FromNanos(at)
	return a, nil
}

// ListWrapperApprovals implements graph.WrapperApprovals.
func (s *Store) ListWrapperApprovals(ctx context.Context) ([]graph.WrapperApproval, error) {
	rows, err := s.query(ctx, `SELECT slug, approval_id, spec_hash, record, updated_at FROM wrapper_approvals ORDER BY slug`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list wrapper approvals: %w", err)
	}
	defer rows.Close()
	var out []graph.WrapperApproval
	for rows.Next() {
		var a graph.WrapperApproval
		var rec string
		var at int64
		if err := rows.Scan(&a.Slug, &a.ApprovalID, &a.SpecHash, &rec, &at); err != nil {
			return nil, fmt.Errorf("sqlite: list wrapper approvals: %w", err)
		}
		a.Record, a.UpdatedAt = []byte(rec), graph.FromNanos(at)
		out = append(out, a)
	}
	return out, rows.Err()
}
