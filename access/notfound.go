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
// so probing ids reveals nothing. It matches both graph.ErrNotFound and
// fault.ErrNotFound.
func ToolNotFound(id string) error { return toolNotFound{id} }

type toolNotFound struct{ id string }

func (e toolNotFound) Error() string { return fmt.Sprintf("tool %q: not found", e.id) }

func (e toolNotFound) Is(target error) bool {
	return errors.Is(graph.ErrNotFound, target) || errors.Is(fault.ErrNotFound, target)
}
