package graph

import (
	"context"
	"time"
)

// Definition statuses: an external operation moves from available (found by
// a source scan) to pending (an airlock review is open for its spec), then
// onboarded or rejected.
const (
	DefinitionAvailable = "available"
	DefinitionPending   = "pending"
	DefinitionOnboarded = "onboarded"
	DefinitionRejected  = "rejected"
)

// Source is a registered place to find external tool definitions: the
// (Source) node of the graph model.
type Source struct {
	ID            string    `json:"id"`
	Type          string    `json:"type"` // openapi | directory
	Location      string    `json:"location"`
	CreatedAt     time.Time `json:"createdAt"`
	LastScannedAt time.Time `json:"lastScannedAt,omitempty"`
	LastError     string    `json:"lastError,omitempty"`
	Specs         int       `json:"specs"`
}

// Definition is one operation of an external spec that is not (yet) a tool:
// (Source)-[:DEFINES]->(Definition). It is searchable, so find-or-build can
// find it, and never executable.
type Definition struct {
	ID          string    `json:"id"`
	SourceID    string    `json:"sourceId"`
	SpecHash    string    `json:"specHash"`
	Location    string    `json:"location"`
	Slug        string    `json:"slug"`
	API         string    `json:"api"`
	Name        string    `json:"name"`
	Method      string    `json:"method"`
	Path        string    `json:"path"`
	Description string    `json:"description"`
	Tags        []string  `json:"tags,omitempty"`
	Status      string    `json:"status"`
	Embedding   []float32 `json:"-"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// DefinitionHit is a scored definition; Score is the cosine similarity.
type DefinitionHit struct {
	Definition Definition `json:"definition"`
	Score      float64    `json:"score"`
}

// Definitions is the part of the graph that holds tool sources and the
// external definitions they yield. It is part of Store.
type Definitions interface {
	// PutSource creates or replaces a source.
	PutSource(ctx context.Context, s Source) error
	// GetSource returns a source or fault.ErrNotFound.
	GetSource(ctx context.Context, id string) (Source, error)
	// Sources lists every source, ordered by id.
	Sources(ctx context.Context) ([]Source, error)
	// DeleteSource removes a source and its definitions that are still
	// available; definitions under review or onboarded are kept.
	DeleteSource(ctx context.Context, id string) error
	// PutDefinitions replaces, atomically, the definitions of one spec of a
	// source. Embedding lengths must match the recorded dimension.
	PutDefinitions(ctx context.Context, sourceID, specHash string, defs []Definition) error
	// SpecDefinitions returns a spec's definitions ordered by id (none: empty).
	SpecDefinitions(ctx context.Context, specHash string) ([]Definition, error)
	// SetSpecStatus sets the status of every definition of a spec.
	SetSpecStatus(ctx context.Context, specHash, status string) error
	// SearchDefinitions returns the k definitions most similar to vec among
	// those whose status is in statuses (empty: available and pending).
	SearchDefinitions(ctx context.Context, vec []float32, k int, statuses []string) ([]DefinitionHit, error)
}

// ValidDefinitionStatus reports whether s is one of the definition statuses.
func ValidDefinitionStatus(s string) bool {
	switch s {
	case DefinitionAvailable, DefinitionPending, DefinitionOnboarded, DefinitionRejected:
		return true
	}
	return false
}
