package registry

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// ReindexPage is what one step of a reindex did.
type ReindexPage struct {
	// Done and Failed are the tool ids re-embedded and those that could not
	// be (their manifest no longer parses, or the embedder refused).
	Done   []string `json:"done"`
	Failed []string `json:"failed,omitempty"`
	// Next is the cursor of the following page; "" after the last.
	Next string `json:"next,omitempty"`
}

// AllStatuses are the statuses a reindex walks: every tool is re-embedded,
// whatever its status, so re-activating one needs no reindex.
var AllStatuses = []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled}

// CountAll returns how many tools a reindex will walk.
func (s *Service) CountAll(ctx context.Context) (int, error) {
	st, err := s.store.Stats(ctx)
	if err != nil {
		return 0, fmt.Errorf("registry: count tools: %w", err)
	}
	return st.Tools, nil
}

// Reindex re-embeds up to limit tools after the cursor after (ids in
// order) with the current embedder and rewrites them (vector and full-text
// row) one transaction per tool, under the tool's lock, so searches keep
// answering from the old or the new row, never a half-written one. The
// tool's record, status and relations are kept; its history gains a
// revision.
func (s *Service) Reindex(ctx context.Context, after string, limit int) (ReindexPage, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	page, err := s.store.ListTools(ctx, graph.ListQuery{After: after, Limit: limit, Filter: graph.Filter{Statuses: AllStatuses}})
	if err != nil {
		return ReindexPage{}, fmt.Errorf("registry: reindex: list: %w", err)
	}
	out := ReindexPage{Done: []string{}, Next: page.Next}
	for _, sum := range page.Items {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		switch err := s.reindexOne(ctx, sum.ID); {
		case err == nil:
			out.Done = append(out.Done, sum.ID)
		case errors.Is(err, fault.ErrNotFound):
			// deleted meanwhile: nothing to index
		case errors.Is(err, errUnparsable), errors.Is(err, graph.ErrDimension):
			out.Failed = append(out.Failed, sum.ID)
		default:
			return out, err
		}
	}
	return out, nil
}

var errUnparsable = errors.New("stored manifest does not parse")

func (s *Service) reindexOne(ctx context.Context, id string) error {
	unlock := s.locks.lock(id)
	defer unlock()
	t, err := s.store.GetTool(ctx, id)
	if err != nil {
		return err
	}
	m, err := tool.Parse(t.Manifest)
	if err != nil {
		return fmt.Errorf("registry: reindex %q: %w: %v", id, errUnparsable, err)
	}
	vecs, err := s.embed(ctx, []string{tool.EmbeddingText(m)})
	if err != nil {
		return fmt.Errorf("registry: reindex %q: %w", id, err)
	}
	t.Embedding = vecs[0]
	t.UpdatedAt = s.now().UTC()
	if _, err := s.store.UpsertTool(ctx, t); err != nil {
		return fmt.Errorf("registry: reindex %q: %w", id, err)
	}
	s.changed(id)
	return nil
}
