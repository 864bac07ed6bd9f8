package access

import (
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// ToolNotFound is the one answer for a tool id that does not exist, that
// the caller may not see, or that is not active: every path (execute,
// manifests, MCP's call_tool and kb.get_document) returns this same error,
// so probing ids reveals nothing. It wraps fault.ErrNotFound.
func ToolNotFound(id string) error { return fmt.Errorf("tool %q: %w", id, fault.ErrNotFound) }

// VisibleTool is the one read rule for a tool by id: t and err are what the
// store's GetTool returned, and a tool that does not exist, is not active,
// or caller may not execute is ToolNotFound, alike. Other errors come back
// wrapped.
func VisibleTool(id string, t graph.Tool, err error, caller Caller) (graph.Tool, error) {
	if errors.Is(err, fault.ErrNotFound) || err == nil && (t.Status != graph.StatusActive || !caller.Allows(&t.ToolSummary)) {
		return graph.Tool{}, ToolNotFound(id)
	}
	if err != nil {
		return graph.Tool{}, fmt.Errorf("tool %q: %w", id, err)
	}
	return t, nil
}
