package neo4j

import (
	"context"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.WrapperApprovals = (*Store)(nil)

// Airlock wrapper approvals (graph.WrapperApprovals):
//
//	(:WrapperApproval {slug, approvalId, specHash, spec, record, updatedAt})
//
// spec is the approved document and record the airlock's JSON record,
// exactly as the SQLite store keeps them.
const (
	cypherConstraintWrapperApproval = `CREATE CONSTRAINT wrapper_approval_slug IF NOT EXISTS FOR (w:WrapperApproval) REQUIRE w.slug IS UNIQUE`
	cypherPutWrapperApproval        = `MERGE (w:WrapperApproval {slug: $slug})
SET w.approvalId = $approvalId, w.specHash = $specHash, w.spec = $spec, w.record = $record, w.updatedAt = $updatedAt`
	cypherGetWrapperApproval = `MATCH (w:WrapperApproval {slug: $slug})
RETURN w.approvalId AS approvalId, w.specHash AS specHash, w.spec AS spec, w.record AS record, w.updatedAt AS updatedAt`
	cypherListWrapperApprovals = `MATCH (w:WrapperApproval)
RETURN w.slug AS slug, w.approvalId AS approvalId, w.specHash AS specHash, w.record AS record, w.updatedAt AS updatedAt
ORDER BY slug`
)

// PutWrapperApproval implements graph.WrapperApprovals.
func (s *Store) PutWrapperApproval(ctx context.Context, a graph.WrapperApproval) error {
	if err := graph.ValidateWrapperApproval(a); err != nil {
		return fmt.Errorf("neo4j: put wrapper approval: %w", err)
	}
	if a.UpdatedAt.IsZero() {
		a.UpdatedAt = s.clock()
	}
	err := s.runWrite(ctx, cypherPutWrapperApproval, map[string]any{
		"slug": a.Slug, "approvalId": a.ApprovalID, "specHash": a.SpecHash, "spec": a.Spec, "record": string(a.Record), "updatedAt": a.UpdatedAt.UnixNano(),
	})
	return wrapErr("put wrapper approval", err)
}

// GetWrapperApproval implements graph.WrapperApprovals.
func (s *Store) GetWrapperApproval(ctx context.Context, slug string) (graph.WrapperApproval, error) {
	a := graph.WrapperApproval{Slug: slug}
	found := false
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetWrapperApproval, map[string]any{"slug": slug})
		if err != nil || len(recs) == 0 {
			return err
		}
		found = true
		r := recs[0]
		if a.ApprovalID, err = getString(r, "approvalId"); err != nil {
			return err
		}
		if a.SpecHash, err = getString(r, "specHash"); err != nil {
			return err
		}
		if a.Spec, err = getString(r, "spec"); err != nil {
			return err
		}
		rec, err := getString(r, "record")
		if err != nil {
			return err
		}
		a.Record = []byte(rec)
		at, err := getInt(r, "updatedAt")
		a.UpdatedAt = graph.FromNanos(at)
		return err
	})
	if err != nil {
		return a, wrapErr("get wrapper approval", err)
	}
	if !found {
		return a, fmt.Errorf("neo4j: wrapper approval %q: %w", slug, fault.ErrNotFound)
	}
	return a, nil
}

// ListWrapperApprovals implements graph.WrapperApprovals.
func (s *Store) ListWrapperApprovals(ctx context.Context) ([]graph.WrapperApproval, error) {
	var out []graph.WrapperApproval
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherListWrapperApprovals, nil)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, r := range recs {
			var a graph.WrapperApproval
			if a.Slug, err = getString(r, "slug"); err != nil {
				return err
			}
			if a.ApprovalID, err = getString(r, "approvalId"); err != nil {
				return err
			}
			if a.SpecHash, err = getString(r, "specHash"); err != nil {
				return err
			}
			rec, err := getString(r, "record")
			if err != nil {
				return err
			}
			at, err := getInt(r, "updatedAt")
			if err != nil {
				return err
			}
			a.Record, a.UpdatedAt = []byte(rec), graph.FromNanos(at)
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("list wrapper approvals", err)
	}
	return out, nil
}
