package neo4j

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.ModelVersions = (*Store)(nil)

// PutModelVersion implements graph.ModelVersions.
func (s *Store) PutModelVersion(ctx context.Context, v graph.ModelVersion) error {
	if err := graph.ValidateModelVersion(v); err != nil {
		return fmt.Errorf("neo4j: %w", err)
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = s.clock()
	}
	var blob any // nil keeps the stored blob
	if v.Blob != nil {
		blob = base64.StdEncoding.EncodeToString(v.Blob)
	}
	err := s.r.write(ctx, func(tx txRunner) error {
		_, err := tx.run(ctx, cypherPutModelVersion, map[string]any{
			"id": v.ID, "createdAt": v.CreatedAt.UnixNano(), "status": v.Status, "record": string(v.Record), "blob": blob})
		return err
	})
	if err != nil {
		return wrapErr("put model version", err)
	}
	return nil
}

// modelVersion reads a version from a record (with its blob when the
// record has one).
func modelVersion(r record) (graph.ModelVersion, error) {
	var v graph.ModelVersion
	var err error
	if v.ID, err = getString(r, "id"); err != nil {
		return v, err
	}
	at, err := getInt(r, "createdAt")
	if err != nil {
		return v, err
	}
	v.CreatedAt = graph.FromNanos(at)
	if v.Status, err = getString(r, "status"); err != nil {
		return v, err
	}
	rec, err := getString(r, "record")
	if err != nil {
		return v, err
	}
	v.Record = []byte(rec)
	if b, ok := r["blob"]; ok && b != nil {
		s, err := getString(r, "blob")
		if err != nil {
			return v, err
		}
		if v.Blob, err = base64.StdEncoding.DecodeString(s); err != nil {
			return v, fmt.Errorf("field \"blob\": %w", err)
		}
	}
	return v, nil
}

// oneModelVersion runs a read that returns at most one version.
func (s *Store) oneModelVersion(ctx context.Context, op, cypher string, params map[string]any) (graph.ModelVersion, bool, error) {
	var v graph.ModelVersion
	found := false
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypher, params)
		if err != nil || len(recs) == 0 {
			return err
		}
		found = true
		v, err = modelVersion(recs[0])
		return err
	})
	if err != nil {
		return graph.ModelVersion{}, false, wrapErr(op, err)
	}
	return v, found, nil
}

// GetModelVersion implements graph.ModelVersions.
func (s *Store) GetModelVersion(ctx context.Context, id string) (graph.ModelVersion, error) {
	v, found, err := s.oneModelVersion(ctx, "get model version", cypherGetModelVersion, map[string]any{"id": id})
	if err != nil {
		return graph.ModelVersion{}, err
	}
	if !found {
		return graph.ModelVersion{}, fmt.Errorf("neo4j: model version %q: %w", id, fault.ErrNotFound)
	}
	return v, nil
}

// ListModelVersions implements graph.ModelVersions.
func (s *Store) ListModelVersions(ctx context.Context, limit int) ([]graph.ModelVersion, error) {
	limit = graph.Limit(limit, graph.DefaultModelVersionsLimit, 0)
	out := []graph.ModelVersion{}
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherListModelVersions, map[string]any{"limit": int64(limit)})
		if err != nil {
			return err
		}
		for _, r := range recs {
			v, err := modelVersion(r)
			if err != nil {
				return err
			}
			v.Blob = nil
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("list model versions", err)
	}
	return out, nil
}

// PromoteModelVersion implements graph.ModelVersions: one write
// transaction checks the version, demotes the promoted one and promotes it.
func (s *Store) PromoteModelVersion(ctx context.Context, id, previous string) error {
	if previous == "" || previous == graph.ModelPromoted {
		return fmt.Errorf("neo4j: promote model version %q: the previous version's status must be set and not %q: %w", id, graph.ModelPromoted, fault.ErrInvalid)
	}
	missing := false
	err := s.r.write(ctx, func(tx txRunner) error {
		if id != "" {
			recs, err := tx.run(ctx, cypherModelVersionExists, map[string]any{"id": id})
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				missing = true
				return nil
			}
		}
		if _, err := tx.run(ctx, cypherDemoteModelVersion, map[string]any{"id": id, "previous": previous}); err != nil {
			return err
		}
		if id == "" {
			return nil
		}
		_, err := tx.run(ctx, cypherPromoteModelVersion, map[string]any{"id": id})
		return err
	})
	if err != nil {
		return wrapErr("promote model version", err)
	}
	if missing {
		return fmt.Errorf("neo4j: promote model version %q: %w", id, fault.ErrNotFound)
	}
	return nil
}

// PromotedModelVersion implements graph.ModelVersions.
func (s *Store) PromotedModelVersion(ctx context.Context) (graph.ModelVersion, error) {
	v, found, err := s.oneModelVersion(ctx, "promoted model version", cypherPromotedModelVersion, nil)
	if err != nil {
		return graph.ModelVersion{}, err
	}
	if !found {
		return graph.ModelVersion{}, fmt.Errorf("neo4j: promoted model version: %w", fault.ErrNotFound)
	}
	return v, nil
}
