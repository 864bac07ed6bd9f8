package access

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// TestToolNotFoundIsNotFound: ToolNotFound matches the one not-found
// sentinel, wrapped or not, and nothing else does.
func TestToolNotFoundIsNotFound(t *testing.T) {
	for _, err := range []error{ToolNotFound("a.b"), fmt.Errorf("lookup: %w", ToolNotFound("a.b"))} {
		if !errors.Is(err, fault.ErrNotFound) {
			t.Errorf("%v: not fault.ErrNotFound", err)
		}
		if errors.Is(err, graph.ErrEmbedderMismatch) || errors.Is(err, errors.New("not found")) {
			t.Errorf("%v: matches an unrelated error", err)
		}
	}
	if got := ToolNotFound("a.b").Error(); got != `tool "a.b": not found` {
		t.Errorf("Error() = %q", got)
	}
}
