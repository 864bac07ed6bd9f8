package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.Gaps = (*Store)(nil)

func decodeGaps(recs []record) ([]graph.Gap, error) {
	out := make([]graph.Gap, 0, len(recs))
	for _, r := range recs {
		raw, err := getString(r, "record")
		if err != nil {
			return nil, err
		}
		var g graph.Gap
		if err := json.Unmarshal([]byte(raw), &g); err != nil {
			return nil, fmt.Errorf("decode gap record: %w", err)
		}
		out = append(out, g)
	}
	return out, nil
}

// putGap writes a gap's node and its COVERED_BY edge in tx.
func putGap(ctx context.Context, tx txRunner, g graph.Gap) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if _, err := tx.run(ctx, cypherPutGap, map[string]any{
		"verb": g.Verb, "status": g.Status, "count": int64(g.Count), "lastSeen": g.LastSeen.UnixNano(), "record": string(b),
	}); err != nil {
		return err
	}
	_, err = tx.run(ctx, cypherCoverGap, map[string]any{"verb": g.Verb, "toolId": g.ClosedBy})
	return err
}

// RecordGap implements graph.Gaps: one write transaction reads, merges and
// writes the verb's gap.
func (s *Store) RecordGap(ctx context.Context, e graph.GapEvent) (graph.Gap, error) {
	if e.At.IsZero() {
		e.At = s.clock()
	}
	if err := graph.ValidateGapEvent(e); err != nil {
		return graph.Gap{}, fmt.Errorf("neo4j: record gap: %w", err)
	}
	var g graph.Gap
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetGap, map[string]any{"verb": e.Verb})
		if err != nil {
			return err
		}
		old, err := decodeGaps(recs)
		if err != nil {
			return err
		}
		prev := graph.Gap{}
		if len(old) > 0 {
			prev = old[0]
		}
		if g, err = graph.MergeGap(prev, e); err != nil {
			return err
		}
		return putGap(ctx, tx, g)
	})
	if err != nil {
		return graph.Gap{}, wrapErr("record gap", err)
	}
	return g, nil
}

// ListGaps implements graph.Gaps.
func (s *Store) ListGaps(ctx context.Context, q graph.GapQuery) ([]graph.Gap, error) {
	q, err := graph.ValidateGapQuery(q)
	if err != nil {
		return nil, fmt.Errorf("neo4j: list gaps: %w", err)
	}
	var out []graph.Gap
	err = s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherListGaps, map[string]any{"status": q.Status, "limit": int64(q.Limit)})
		if err != nil {
			return err
		}
		out, err = decodeGaps(recs)
		return err
	})
	if err != nil {
		return nil, wrapErr("list gaps", err)
	}
	return out, nil
}

// CloseGap implements graph.Gaps.
func (s *Store) CloseGap(ctx context.Context, verb, toolID string, at time.Time) (bool, error) {
	if at.IsZero() {
		at = s.clock()
	}
	closed := false
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetGap, map[string]any{"verb": verb})
		if err != nil {
			return err
		}
		gaps, err := decodeGaps(recs)
		if err != nil || len(gaps) == 0 || gaps[0].Status != graph.GapOpen {
			return err
		}
		g := graph.ClosedGap(gaps[0], toolID, at)
		closed = true
		return putGap(ctx, tx, g)
	})
	if err != nil {
		return false, wrapErr("close gap", err)
	}
	return closed, nil
}
