package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// ModelPromoted is the status of the one promoted model version; every
// other status is the owning domain's word (retrain: candidate, rejected,
// superseded, rolled-back).
const ModelPromoted = "promoted"

// ModelVersion is one stored version of a learned ranking model: the
// domain's description of it (Record: its figures, weights and counts, a
// JSON object) and its learned parameters (Blob, which may be large and
// which listings leave out).
type ModelVersion struct {
	ID        string          `json:"id"`
	CreatedAt time.Time       `json:"createdAt"`
	Status    string          `json:"status"`
	Record    json.RawMessage `json:"record"`
	Blob      []byte          `json:"-"`
}

// ModelVersions stores model versions, at most one of them promoted. It is
// part of Store.
type ModelVersions interface {
	// PutModelVersion inserts v, or replaces the version of the same id;
	// a nil Blob keeps the stored one. ID, Status and Record (a JSON
	// object) are required, and Status may not be ModelPromoted
	// (promotion is PromoteModelVersion's): fault.ErrInvalid.
	PutModelVersion(ctx context.Context, v ModelVersion) error
	// GetModelVersion returns a version with its Blob, or fault.ErrNotFound.
	GetModelVersion(ctx context.Context, id string) (ModelVersion, error)
	// ListModelVersions returns up to limit versions (limit <= 0: 50),
	// newest first (CreatedAt, then id, descending), without their Blobs.
	ListModelVersions(ctx context.Context, limit int) ([]ModelVersion, error)
	// PromoteModelVersion makes id the promoted version, atomically: the
	// version promoted before it (if another) takes status previous. An
	// empty id promotes none (the baseline). An unknown id is fault.ErrNotFound
	// and changes nothing; an empty previous is fault.ErrInvalid.
	PromoteModelVersion(ctx context.Context, id, previous string) error
	// PromotedModelVersion returns the promoted version with its Blob, or
	// fault.ErrNotFound when none is.
	PromotedModelVersion(ctx context.Context) (ModelVersion, error)
}

// ValidateModelVersion checks a version before PutModelVersion stores it.
func ValidateModelVersion(v ModelVersion) error {
	if strings.TrimSpace(v.ID) == "" || len(v.ID) > 100 {
		return fmt.Errorf("model version: id must be 1 to 100 characters: %w", fault.ErrInvalid)
	}
	if strings.TrimSpace(v.Status) == "" || v.Status == ModelPromoted {
		return fmt.Errorf("model version %q: status must be set and not %q (promote it instead): %w", v.ID, ModelPromoted, fault.ErrInvalid)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v.Record, &obj) != nil || obj == nil {
		return fmt.Errorf("model version %q: record is not a JSON object: %w", v.ID, fault.ErrInvalid)
	}
	return nil
}
