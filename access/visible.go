package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// ToolGetter is the store's read of one tool by id.
type ToolGetter interface {
	GetTool(ctx context.Context, id string) (graph.Tool, error)
}

// VisibleIDs keeps, in order, the tool ids the caller may execute (by
// VisibleTool's rule): a list that names a tool answers only callers who
// could run it. Ids of tools that are gone or hidden are dropped alike.
func VisibleIDs(ctx context.Context, g ToolGetter, ids []string, caller Caller) ([]string, error) {
	if len(ids) == 0 {
		return ids, nil
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		ok, err := visibleID(ctx, g, id, caller)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// GapReader is what VisibleGaps reads of the store: tools by id, and the
// tools directly about an entity.
type GapReader interface {
	ToolGetter
	ToolsNearEntities(ctx context.Context, keys []string, maxDepth int, f graph.Filter) ([]graph.EntityHit, error)
}

// VisibleGaps returns gaps as the caller may see them: each gap's closest
// tools and the tool that closed it name only tools the caller may
// execute (a gap closed by a hidden tool stays closed, without the id),
// and its entities only those some tool the caller may execute is about
// (as search shows entities).
func VisibleGaps(ctx context.Context, g GapReader, gaps []graph.Gap, caller Caller) ([]graph.Gap, error) {
	out := make([]graph.Gap, len(gaps))
	seen := map[string]bool{} // entity key → some visible tool is about it
	for i, gp := range gaps {
		ents := make([]string, 0, len(gp.Entities))
		for _, e := range gp.Entities {
			k := graph.EntityKey(e)
			ok, done := seen[k]
			if !done {
				hits, err := g.ToolsNearEntities(ctx, []string{k}, 1, caller.Filter())
				if err != nil {
					return nil, fmt.Errorf("access: tools about entity %q: %w", e, err)
				}
				ok = len(hits) > 0
				seen[k] = ok
			}
			if ok {
				ents = append(ents, e)
			}
		}
		gp.Entities = ents
		closest := make([]graph.GapCandidate, 0, len(gp.Closest))
		for _, c := range gp.Closest {
			ok, err := visibleID(ctx, g, c.ToolID, caller)
			if err != nil {
				return nil, err
			}
			if ok {
				closest = append(closest, c)
			}
		}
		gp.Closest = closest
		if gp.ClosedBy != "" {
			ok, err := visibleID(ctx, g, gp.ClosedBy, caller)
			if err != nil {
				return nil, err
			}
			if !ok {
				gp.ClosedBy = ""
			}
		}
		out[i] = gp
	}
	return out, nil
}

func visibleID(ctx context.Context, g ToolGetter, id string, caller Caller) (bool, error) {
	t, err := g.GetTool(ctx, id)
	if _, err := VisibleTool(id, t, err, caller); err != nil {
		if errors.Is(err, fault.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// SeesEveryTool reports whether the caller is an owner: the operators'
// views of what other callers did (a verb run's record, the analytics)
// show an owner every tool, and everyone else only the tools they may
// execute.
func (c Caller) SeesEveryTool() bool { return LevelRank(c.Level) >= LevelRank("owner") }

// HiddenIDs returns the ids among ids that the caller may not see in an
// operator's view: none for an owner, otherwise those VisibleIDs would
// drop. A nil getter hides every id from a non-owner (nothing can vouch
// for them).
func HiddenIDs(ctx context.Context, g ToolGetter, ids []string, caller Caller) (map[string]bool, error) {
	hidden := map[string]bool{}
	if caller.SeesEveryTool() {
		return hidden, nil
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		if _, done := hidden[id]; done {
			continue
		}
		ok := false
		if g != nil {
			var err error
			if ok, err = visibleID(ctx, g, id, caller); err != nil {
				return nil, err
			}
		}
		hidden[id] = !ok
	}
	for id, h := range hidden {
		if !h {
			delete(hidden, id)
		}
	}
	return hidden, nil
}

// HiddenTool stands for a tool's id in text shown to a caller that may not
// execute the tool.
const HiddenTool = "(a tool you may not execute)"

// RedactText replaces every hidden tool id in s with HiddenTool, the
// longest id first (so an id that contains another is replaced whole).
func RedactText(s string, hidden map[string]bool) string {
	if s == "" || len(hidden) == 0 {
		return s
	}
	ids := make([]string, 0, len(hidden))
	for id := range hidden {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return len(b) - len(a) })
	for _, id := range ids {
		s = strings.ReplaceAll(s, id, HiddenTool)
	}
	return s
}
