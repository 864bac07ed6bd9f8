package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.ModelVersions = (*Store)(nil)

// PutModelVersion implements graph.ModelVersions.
func (s *Store) PutModelVersion(ctx context.Context, v graph.ModelVersion) error {
	if err := s.writable("put model version"); err != nil {
		return err
	}
	if err := graph.ValidateModelVersion(v); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = s.now()
	}
	var blob any
	if v.Blob != nil {
		blob = v.Blob
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// A nil blob keeps the stored one (a status or figures update).
	if _, err := s.db.ExecContext(ctx, `INSERT INTO model_versions(id, created_at, status, record, blob) VALUES (?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET created_at = excluded.created_at, status = excluded.status, record = excluded.record,
	blob = COALESCE(excluded.blob, model_versions.blob)`,
		v.ID, graph.Nanos(v.CreatedAt), v.Status, string(v.Record), blob); err != nil {
		return fmt.Errorf("sqlite: put model version %q: %w", v.ID, err)
	}
	return nil
}

const modelColumns = `id, created_at, status, record`

func scanModel(sc interface{ Scan(...any) error }, withBlob bool) (graph.ModelVersion, error) {
	var v graph.ModelVersion
	var at int64
	var rec string
	dest := []any{&v.ID, &at, &v.Status, &rec}
	if withBlob {
		dest = append(dest, &v.Blob)
	}
	if err := sc.Scan(dest...); err != nil {
		return graph.ModelVersion{}, err
	}
	v.CreatedAt, v.Record = graph.FromNanos(at), []byte(rec)
	return v, nil
}

// GetModelVersion implements graph.ModelVersions.
func (s *Store) GetModelVersion(ctx context.Context, id string) (graph.ModelVersion, error) {
	v, err := scanModel(s.db.QueryRowContext(ctx, `SELECT `+modelColumns+`, blob FROM model_versions WHERE id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return graph.ModelVersion{}, fmt.Errorf("sqlite: model version %q: %w", id, fault.ErrNotFound)
	}
	if err != nil {
		return graph.ModelVersion{}, fmt.Errorf("sqlite: model version %q: %w", id, err)
	}
	return v, nil
}

// ListModelVersions implements graph.ModelVersions.
func (s *Store) ListModelVersions(ctx context.Context, limit int) ([]graph.ModelVersion, error) {
	limit = graph.Limit(limit, graph.DefaultModelVersionsLimit, 0)
	rows, err := s.db.QueryContext(ctx, `SELECT `+modelColumns+` FROM model_versions ORDER BY created_at DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list model versions: %w", err)
	}
	defer rows.Close()
	out := []graph.ModelVersion{}
	for rows.Next() {
		v, err := scanModel(rows, false)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list model versions: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list model versions: %w", err)
	}
	return out, nil
}

// PromoteModelVersion implements graph.ModelVersions.
func (s *Store) PromoteModelVersion(ctx context.Context, id, previous string) error {
	if err := s.writable("promote model version"); err != nil {
		return err
	}
	if previous == "" || previous == graph.ModelPromoted {
		return fmt.Errorf("sqlite: promote model version %q: the previous version's status must be set and not %q: %w", id, graph.ModelPromoted, fault.ErrInvalid)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: promote model version %q: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	if id != "" {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM model_versions WHERE id = ?`, id).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: promote model version %q: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("sqlite: promote model version %q: %w", id, fault.ErrNotFound)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE model_versions SET status = ? WHERE status = ? AND id <> ?`, previous, graph.ModelPromoted, id); err != nil {
		return fmt.Errorf("sqlite: promote model version %q: %w", id, err)
	}
	if id != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE model_versions SET status = ? WHERE id = ?`, graph.ModelPromoted, id); err != nil {
			return fmt.Errorf("sqlite: promote model version %q: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: promote model version %q: %w", id, err)
	}
	return nil
}

// PromotedModelVersion implements graph.ModelVersions.
func (s *Store) PromotedModelVersion(ctx context.Context) (graph.ModelVersion, error) {
	v, err := scanModel(s.db.QueryRowContext(ctx, `SELECT `+modelColumns+`, blob FROM model_versions WHERE status = ?`, graph.ModelPromoted), true)
	if errors.Is(err, sql.ErrNoRows) {
		return graph.ModelVersion{}, fmt.Errorf("sqlite: promoted model version: %w", fault.ErrNotFound)
	}
	if err != nil {
		return graph.ModelVersion{}, fmt.Errorf("sqlite: promoted model version: %w", err)
	}
	return v, nil
}
