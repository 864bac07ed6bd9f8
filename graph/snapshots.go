package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Snapshot is a named, timestamped JSON document the store keeps: the
// latest result of a periodic computation (the scheduled analytics). A
// new snapshot of a name replaces the old one.
type Snapshot struct {
	Name string          `json:"name"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data"`
}

// Snapshots stores snapshots. It is part of Store.
type Snapshots interface {
	// PutSnapshot stores s, replacing the snapshot of the same name. Name
	// and Data (a JSON value) are required (fault.ErrInvalid).
	PutSnapshot(ctx context.Context, s Snapshot) error
	// GetSnapshot returns the latest snapshot of name, or fault.ErrNotFound.
	GetSnapshot(ctx context.Context, name string) (Snapshot, error)
}

// ValidateSnapshot checks a snapshot before it is stored.
func ValidateSnapshot(s Snapshot) error {
	if strings.TrimSpace(s.Name) == "" || len(s.Name) > 100 {
		return fmt.Errorf("snapshot: name must be 1 to 100 characters: %w", fault.ErrInvalid)
	}
	if !json.Valid(s.Data) {
		return fmt.Errorf("snapshot %q: data is not JSON: %w", s.Name, fault.ErrInvalid)
	}
	return nil
}
