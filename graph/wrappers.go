package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// WrapperApproval is an airlock approval as the store keeps it for every
// worker: the approved spec document and the airlock's record of the
// approval (policy, base URL, tools, the hash of the generated sources),
// by wrapper name. A worker that lacks the wrapper rebuilds it from these.
type WrapperApproval struct {
	// Slug is the wrapper's name (the prefix of its tools' ids).
	Slug       string `json:"slug"`
	ApprovalID string `json:"approvalId"`
	// SpecHash is the hex sha256 of Spec.
	SpecHash string `json:"specHash"`
	// Spec is the approved spec document, as fetched.
	Spec string `json:"spec"`
	// Record is the airlock's approval record (JSON).
	Record    json.RawMessage `json:"record"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// WrapperApprovals keeps the current approval of each wrapper. It is part
// of Store.
type WrapperApprovals interface {
	// PutWrapperApproval records a's as the wrapper's current approval,
	// replacing the one before. Slug, ApprovalID, SpecHash, Spec and
	// Record are required (fault.ErrInvalid).
	PutWrapperApproval(ctx context.Context, a WrapperApproval) error
	// GetWrapperApproval returns a wrapper's current approval, or
	// fault.ErrNotFound.
	GetWrapperApproval(ctx context.Context, slug string) (WrapperApproval, error)
	// ListWrapperApprovals returns every wrapper's current approval,
	// ordered by slug, without the spec documents (Spec is empty).
	ListWrapperApprovals(ctx context.Context) ([]WrapperApproval, error)
}

// ValidateWrapperApproval checks what both stores require of an approval.
func ValidateWrapperApproval(a WrapperApproval) error {
	for _, f := range []struct{ name, v string }{{"slug", a.Slug}, {"approvalId", a.ApprovalID}, {"specHash", a.SpecHash}, {"spec", a.Spec}, {"record", string(a.Record)}} {
		if f.v == "" {
			return fmt.Errorf("wrapper approval %s is required: %w", f.name, fault.ErrInvalid)
		}
	}
	return nil
}
