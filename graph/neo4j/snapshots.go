package neo4j

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.Snapshots = (*Store)(nil)

// PutSnapshot implements graph.Snapshots.
func (s *Store) PutSnapshot(ctx context.Context, snap graph.Snapshot) error {
	if err := graph.ValidateSnapshot(snap); err != nil {
		return fmt.Errorf("neo4j: %w", err)
	}
	if snap.At.IsZero() {
		snap.At = s.clock()
	}
	snap.At = snap.At.UTC()
	b, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("neo4j: put snapshot %q: %w", snap.Name, err)
	}
	err = s.r.write(ctx, func(tx txRunner) error {
		_, err := tx.run(ctx, cypherPutSnapshot, map[string]any{"key": "snapshot:" + snap.Name, "record": string(b)})
		return err
	})
	if err != nil {
		return wrapErr("put snapshot", err)
	}
	return nil
}

// GetSnapshot implements graph.Snapshots.
func (s *Store) GetSnapshot(ctx context.Context, name string) (graph.Snapshot, error) {
	var raw string
	found := false
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetSnapshot, map[string]any{"key": "snapshot:" + name})
		if err != nil || len(recs) == 0 {
			return err
		}
		found = true
		raw, err = getString(recs[0], "record")
		return err
	})
	if err != nil {
		return graph.Snapshot{}, wrapErr("get snapshot", err)
	}
	if !found {
		return graph.Snapshot{}, fmt.Errorf("neo4j: snapshot %q: %w", name, fault.ErrNotFound)
	}
	var snap graph.Snapshot
	if err := json.Unmarshal([]byte(raw), &snap); err != nil {
		return graph.Snapshot{}, fmt.Errorf("neo4j: snapshot %q: decode: %w", name, err)
	}
	return snap, nil
}
