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

var _ graph.Snapshots = (*Store)(nil)

// Snapshots live in the meta table under "snapshot:<name>".
func snapshotKey(name string) string { return "snapshot:" + name }

// PutSnapshot implements graph.Snapshots.
func (s *Store) PutSnapshot(ctx context.Context, snap graph.Snapshot) error {
	if err := s.writable("put snapshot"); err != nil {
		return err
	}
	if err := graph.ValidateSnapshot(snap); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if snap.At.IsZero() {
		snap.At = s.now()
	}
	snap.At = snap.At.UTC()
	b, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("sqlite: put snapshot %q: %w", snap.Name, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
		snapshotKey(snap.Name), string(b)); err != nil {
		return fmt.Errorf("sqlite: put snapshot %q: %w", snap.Name, err)
	}
	return nil
}

// GetSnapshot implements graph.Snapshots.
func (s *Store) GetSnapshot(ctx context.Context, name string) (graph.Snapshot, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, snapshotKey(name)).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return graph.Snapshot{}, fmt.Errorf("sqlite: snapshot %q: %w", name, fault.ErrNotFound)
	}
	if err != nil {
		return graph.Snapshot{}, fmt.Errorf("sqlite: snapshot %q: %w", name, err)
	}
	var snap graph.Snapshot
	if err := json.Unmarshal([]byte(v), &snap); err != nil {
		return graph.Snapshot{}, fmt.Errorf("sqlite: snapshot %q: decode: %w", name, err)
	}
	return snap, nil
}
