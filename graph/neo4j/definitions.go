package neo4j

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.Definitions = (*Store)(nil)

func (s *Store) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now().UTC()
}

// PutSource implements graph.Definitions.
func (s *Store) PutSource(ctx context.Context, src graph.Source) error {
	if src.ID == "" || src.Type == "" || src.Location == "" {
		return fmt.Errorf("neo4j: put source: id, type and location are required: %w", fault.ErrInvalid)
	}
	created := src.CreatedAt
	if created.IsZero() {
		created = s.clock()
	}
	var scanned int64
	if !src.LastScannedAt.IsZero() {
		scanned = src.LastScannedAt.UnixNano()
	}
	err := s.runWrite(ctx, cypherPutSource, map[string]any{
		"id": src.ID, "type": src.Type, "location": src.Location, "createdAt": created.UnixNano(),
		"lastScannedAt": scanned, "lastError": src.LastError, "specs": int64(src.Specs),
	})
	return wrapErr("put source", err)
}

func decodeSource(r record) (graph.Source, error) {
	var src graph.Source
	var err error
	if src.ID, err = getString(r, "id"); err != nil {
		return src, err
	}
	if src.Type, err = getString(r, "type"); err != nil {
		return src, err
	}
	if src.Location, err = getString(r, "location"); err != nil {
		return src, err
	}
	if src.LastError, err = getString(r, "lastError"); err != nil {
		return src, err
	}
	created, err := getInt(r, "createdAt")
	if err != nil {
		return src, err
	}
	scanned, err := getInt(r, "lastScannedAt")
	if err != nil {
		return src, err
	}
	specs, err := getInt(r, "specs")
	if err != nil {
		return src, err
	}
	src.CreatedAt = time.Unix(0, created).UTC()
	if scanned != 0 {
		src.LastScannedAt = time.Unix(0, scanned).UTC()
	}
	src.Specs = int(specs)
	return src, nil
}

// GetSource implements graph.Definitions.
func (s *Store) GetSource(ctx context.Context, id string) (graph.Source, error) {
	var out graph.Source
	found := false
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetSource, map[string]any{"id": id})
		if err != nil || len(recs) == 0 {
			return err
		}
		found = true
		out, err = decodeSource(recs[0])
		return err
	})
	if err != nil {
		return graph.Source{}, wrapErr("get source", err)
	}
	if !found {
		return graph.Source{}, fmt.Errorf("neo4j: get source %q: %w", id, fault.ErrNotFound)
	}
	return out, nil
}

// Sources implements graph.Definitions.
func (s *Store) Sources(ctx context.Context) ([]graph.Source, error) {
	out := []graph.Source{}
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherSources, nil)
		if err != nil {
			return err
		}
		for _, r := range recs {
			src, err := decodeSource(r)
			if err != nil {
				return err
			}
			out = append(out, src)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("sources", err)
	}
	return out, nil
}

// DeleteSource implements graph.Definitions.
func (s *Store) DeleteSource(ctx context.Context, id string) error {
	deleted := int64(0)
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherDeleteSource, map[string]any{"id": id})
		if err != nil || len(recs) == 0 {
			return err
		}
		deleted, err = getInt(recs[0], "deleted")
		return err
	})
	if err != nil {
		return wrapErr("delete source", err)
	}
	if deleted == 0 {
		return fmt.Errorf("neo4j: delete source %q: %w", id, fault.ErrNotFound)
	}
	return nil
}

// PutDefinitions implements graph.Definitions: the spec's old definitions
// are removed and the new ones written in one transaction.
func (s *Store) PutDefinitions(ctx context.Context, sourceID, specHash string, defs []graph.Definition) error {
	if sourceID == "" || specHash == "" {
		return fmt.Errorf("neo4j: put definitions: source id and spec hash are required: %w", fault.ErrInvalid)
	}
	now := s.clock()
	rows := make([]map[string]any, 0, len(defs))
	for i, d := range defs {
		if err := graph.CheckDefinition(&d, i); err != nil {
			return fmt.Errorf("neo4j: put definitions: %w", err)
		}
		var emb any
		if len(d.Embedding) > 0 {
			if err := s.checkDim(ctx, "put definitions", d.Embedding); err != nil {
				return err
			}
			emb = vectorParam(graph.Normalize(append([]float32(nil), d.Embedding...)))
		}
		d.SourceID, d.SpecHash, d.UpdatedAt = sourceID, specHash, now
		rec, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("neo4j: put definitions: %w", err)
		}
		rows = append(rows, map[string]any{"id": d.ID, "status": d.Status, "record": string(rec), "embedding": emb})
	}
	err := s.r.write(ctx, func(tx txRunner) error {
		if _, err := tx.run(ctx, cypherDeleteSpecDefinitions, map[string]any{"specHash": specHash, "sourceId": sourceID}); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		_, err := tx.run(ctx, cypherPutDefinitions, map[string]any{"sourceId": sourceID, "specHash": specHash, "defs": rows, "now": now.UnixNano()})
		return err
	})
	return wrapErr("put definitions", err)
}

func decodeDefinition(r record) (graph.Definition, error) {
	raw, err := getString(r, "record")
	if err != nil {
		return graph.Definition{}, err
	}
	var d graph.Definition
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return graph.Definition{}, fmt.Errorf("definition record: %w", err)
	}
	if d.Status, err = getString(r, "status"); err != nil {
		return graph.Definition{}, err
	}
	if _, ok := r["embedding"]; ok {
		if d.Embedding, err = getVector(r, "embedding"); err != nil {
			return graph.Definition{}, err
		}
	}
	return d, nil
}

// SpecDefinitions implements graph.Definitions.
func (s *Store) SpecDefinitions(ctx context.Context, specHash string) ([]graph.Definition, error) {
	out := []graph.Definition{}
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherSpecDefinitions, map[string]any{"specHash": specHash})
		if err != nil {
			return err
		}
		for _, r := range recs {
			d, err := decodeDefinition(r)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("spec definitions", err)
	}
	return out, nil
}

// SetSpecStatus implements graph.Definitions.
func (s *Store) SetSpecStatus(ctx context.Context, specHash, status string) error {
	if !graph.ValidDefinitionStatus(status) {
		return fmt.Errorf("neo4j: set spec status %q: %w", status, fault.ErrInvalid)
	}
	n := int64(0)
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherSetSpecStatus, map[string]any{"specHash": specHash, "status": status, "now": s.clock().UnixNano()})
		if err != nil || len(recs) == 0 {
			return err
		}
		n, err = getInt(recs[0], "n")
		return err
	})
	if err != nil {
		return wrapErr("set spec status", err)
	}
	if n == 0 {
		return fmt.Errorf("neo4j: set spec status: spec %q: %w", specHash, fault.ErrNotFound)
	}
	return nil
}

// SearchDefinitions implements graph.Definitions. The vector index is
// approximate and filters after ranking, so it is asked for ten times k
// candidates (at least 100) before the status filter.
func (s *Store) SearchDefinitions(ctx context.Context, vec []float32, k int, statuses []string) ([]graph.DefinitionHit, error) {
	if k <= 0 {
		return []graph.DefinitionHit{}, nil
	}
	if err := s.checkDim(ctx, "search definitions", vec); err != nil {
		return nil, err
	}
	if len(statuses) == 0 {
		statuses = []string{graph.DefinitionAvailable, graph.DefinitionPending}
	}
	candidates := max(10*k, 100)
	out := []graph.DefinitionHit{}
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherSearchDefinitions, map[string]any{
			"candidates": int64(candidates), "k": int64(k), "statuses": statuses,
			"vector": vectorParam(graph.Normalize(append([]float32(nil), vec...))),
		})
		if err != nil {
			return err
		}
		for _, r := range recs {
			d, err := decodeDefinition(r)
			if err != nil {
				return err
			}
			score, err := getFloat(r, "score")
			if err != nil {
				return err
			}
			out = append(out, graph.DefinitionHit{Definition: d, Score: fromCosineScore(score)})
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, graph.ErrDimension) {
			return nil, err
		}
		return nil, wrapErr("search definitions", err)
	}
	return out, nil
}
