package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/viterin/vek/vek32"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.Definitions = (*Store)(nil)

// PutSource implements graph.Definitions.
func (s *Store) PutSource(ctx context.Context, src graph.Source) error {
	if err := s.writable("put source"); err != nil {
		return err
	}
	if src.ID == "" || src.Type == "" || src.Location == "" {
		return fmt.Errorf("sqlite: put source: id, type and location are required: %w", fault.ErrInvalid)
	}
	if src.CreatedAt.IsZero() {
		src.CreatedAt = s.now()
	}
	scanned := int64(0)
	if !src.LastScannedAt.IsZero() {
		scanned = graph.Nanos(src.LastScannedAt)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO sources(id, type, location, created_at, last_scanned_at, last_error, specs)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET type = excluded.type, location = excluded.location,
			last_scanned_at = excluded.last_scanned_at, last_error = excluded.last_error, specs = excluded.specs`,
		src.ID, src.Type, src.Location, graph.Nanos(src.CreatedAt), scanned, src.LastError, src.Specs)
	if err != nil {
		return fmt.Errorf("sqlite: put source %q: %w", src.ID, err)
	}
	return nil
}

func scanSource(row interface{ Scan(...any) error }) (graph.Source, error) {
	var src graph.Source
	var created, scanned int64
	if err := row.Scan(&src.ID, &src.Type, &src.Location, &created, &scanned, &src.LastError, &src.Specs); err != nil {
		return graph.Source{}, err
	}
	src.CreatedAt = graph.FromNanos(created)
	if scanned != 0 {
		src.LastScannedAt = graph.FromNanos(scanned)
	}
	return src, nil
}

const sourceColumns = `id, type, location, created_at, last_scanned_at, last_error, specs`

// GetSource implements graph.Definitions.
func (s *Store) GetSource(ctx context.Context, id string) (graph.Source, error) {
	src, err := scanSource(s.db.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return graph.Source{}, fmt.Errorf("sqlite: get source %q: %w", id, fault.ErrNotFound)
	}
	if err != nil {
		return graph.Source{}, fmt.Errorf("sqlite: get source %q: %w", id, err)
	}
	return src, nil
}

// Sources implements graph.Definitions.
func (s *Store) Sources(ctx context.Context) ([]graph.Source, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sourceColumns+` FROM sources ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: sources: %w", err)
	}
	defer rows.Close()
	out := []graph.Source{}
	for rows.Next() {
		src, err := scanSource(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: sources: %w", err)
		}
		out = append(out, src)
	}
	return out, rows.Err()
}

// DeleteSource implements graph.Definitions.
func (s *Store) DeleteSource(ctx context.Context, id string) error {
	if err := s.writable("delete source"); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delete source %q: %w", id, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM sources WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete source %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: delete source %q: %w", id, fault.ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM definitions WHERE source_id = ? AND status = ?`, id, graph.DefinitionAvailable); err != nil {
		return fmt.Errorf("sqlite: delete source %q: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: delete source %q: %w", id, err)
	}
	return nil
}

// PutDefinitions implements graph.Definitions.
func (s *Store) PutDefinitions(ctx context.Context, sourceID, specHash string, defs []graph.Definition) error {
	if err := s.writable("put definitions"); err != nil {
		return err
	}
	if sourceID == "" || specHash == "" {
		return fmt.Errorf("sqlite: put definitions: source id and spec hash are required: %w", fault.ErrInvalid)
	}
	for i := range defs {
		d := &defs[i]
		if err := graph.CheckDefinition(d, i); err != nil {
			return fmt.Errorf("sqlite: put definitions: %w", err)
		}
		if len(d.Embedding) > 0 {
			if err := s.checkDim("put definitions", d.Embedding); err != nil {
				return err
			}
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: put definitions: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM definitions WHERE spec_hash = ? AND source_id = ?`, specHash, sourceID); err != nil {
		return fmt.Errorf("sqlite: put definitions: %w", err)
	}
	now := s.now()
	for _, d := range defs {
		d.SourceID, d.SpecHash, d.UpdatedAt = sourceID, specHash, now
		rec, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("sqlite: put definitions: %w", err)
		}
		var emb []byte
		if len(d.Embedding) > 0 {
			emb = encodeVec(graph.Normalize(append([]float32(nil), d.Embedding...)))
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO definitions(id, source_id, spec_hash, status, record, embedding, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(id) DO UPDATE SET source_id = excluded.source_id, spec_hash = excluded.spec_hash, status = excluded.status,
				record = excluded.record, embedding = excluded.embedding, updated_at = excluded.updated_at`,
			d.ID, sourceID, specHash, d.Status, string(rec), emb, graph.Nanos(now)); err != nil {
			return fmt.Errorf("sqlite: put definition %q: %w", d.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: put definitions: %w", err)
	}
	return nil
}

func scanDefinition(row interface{ Scan(...any) error }) (graph.Definition, error) {
	var rec, status string
	var emb []byte
	if err := row.Scan(&rec, &status, &emb); err != nil {
		return graph.Definition{}, err
	}
	var d graph.Definition
	if err := json.Unmarshal([]byte(rec), &d); err != nil {
		return graph.Definition{}, err
	}
	d.Status = status
	if len(emb) > 0 {
		d.Embedding = decodeVec(emb)
	}
	return d, nil
}

// SpecDefinitions implements graph.Definitions.
func (s *Store) SpecDefinitions(ctx context.Context, specHash string) ([]graph.Definition, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT record, status, embedding FROM definitions WHERE spec_hash = ? ORDER BY id`, specHash)
	if err != nil {
		return nil, fmt.Errorf("sqlite: spec definitions: %w", err)
	}
	defer rows.Close()
	out := []graph.Definition{}
	for rows.Next() {
		d, err := scanDefinition(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: spec definitions: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// SetSpecStatus implements graph.Definitions.
func (s *Store) SetSpecStatus(ctx context.Context, specHash, status string) error {
	if err := s.writable("set spec status"); err != nil {
		return err
	}
	if !graph.ValidDefinitionStatus(status) {
		return fmt.Errorf("sqlite: set spec status %q: %w", status, fault.ErrInvalid)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `UPDATE definitions SET status = ?, updated_at = ? WHERE spec_hash = ?`, status, graph.Nanos(s.now()), specHash)
	if err != nil {
		return fmt.Errorf("sqlite: set spec status: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: set spec status: spec %q: %w", specHash, fault.ErrNotFound)
	}
	return nil
}

// SearchDefinitions implements graph.Definitions. Definitions are searched
// by an exact scan of the matching rows: find-or-build runs only when search
// and decomposition have failed, so its cost is not on a hot path.
func (s *Store) SearchDefinitions(ctx context.Context, vec []float32, k int, statuses []string) ([]graph.DefinitionHit, error) {
	if k <= 0 {
		return []graph.DefinitionHit{}, nil
	}
	if err := s.checkDim("search definitions", vec); err != nil {
		return nil, err
	}
	if len(statuses) == 0 {
		statuses = []string{graph.DefinitionAvailable, graph.DefinitionPending}
	}
	q := graph.Normalize(append([]float32(nil), vec...))
	args := make([]any, len(statuses))
	for i, st := range statuses {
		args[i] = st
	}
	rows, err := s.db.QueryContext(ctx, `SELECT record, status, embedding FROM definitions
		WHERE embedding IS NOT NULL AND status IN (?`+strings.Repeat(",?", len(statuses)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search definitions: %w", err)
	}
	defer rows.Close()
	var hits []graph.DefinitionHit
	for rows.Next() {
		d, err := scanDefinition(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: search definitions: %w", err)
		}
		hits = append(hits, graph.DefinitionHit{Definition: d, Score: float64(vek32.Dot(q, d.Embedding))})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search definitions: %w", err)
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Definition.ID < hits[j].Definition.ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	for i := range hits {
		hits[i].Definition.Embedding = nil
	}
	return hits, nil
}
