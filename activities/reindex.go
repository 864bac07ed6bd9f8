package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/toolsmith/toolsmith/registry"
)

// Reindexer re-embeds tools page by page; registry.Service implements it.
type Reindexer interface {
	CountAll(ctx context.Context) (int, error)
	Reindex(ctx context.Context, after string, limit int) (registry.ReindexPage, error)
}

// Reindex holds the reindex activities.
type Reindex struct {
	Tools Reindexer
}

// ReindexPageInput is one step of a reindex.
type ReindexPageInput struct {
	After string `json:"after,omitempty"`
	Limit int    `json:"limit"`
}

// CountTools returns how many tools a reindex will walk.
func (r *Reindex) CountTools(ctx context.Context) (int, error) {
	if r.Tools == nil {
		return 0, Fail(ErrTypeNotExecutable, "reindex: this worker has no registry")
	}
	return r.Tools.CountAll(ctx)
}

// ReindexTools re-embeds one page of tools, heartbeating as it goes.
func (r *Reindex) ReindexTools(ctx context.Context, in ReindexPageInput) (registry.ReindexPage, error) {
	if r.Tools == nil {
		return registry.ReindexPage{}, Fail(ErrTypeNotExecutable, "reindex: this worker has no registry")
	}
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, in.After)
	}
	return r.Tools.Reindex(ctx, in.After, in.Limit)
}
