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
	return validateNamedJSON("snapshot", "name", s.Name, s.Data)
}

// validateNamedJSON is what both stores require of a record kept as a
// name and a JSON document (a snapshot, a notice): a name of 1 to 100
// characters, called field in the message, and valid JSON.
func validateNamedJSON(kind, field, name string, data []byte) error {
	if strings.TrimSpace(name) == "" || len(name) > 100 {
		return fmt.Errorf("%s: %s must be 1 to 100 characters: %w", kind, field, fault.ErrInvalid)
	}
	if !json.Valid(data) {
		return fmt.Errorf("%s %q: data is not JSON: %w", kind, name, fault.ErrInvalid)
	}
	return nil
}
