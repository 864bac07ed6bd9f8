package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// sourceDocs serves kb.get_document's source documents: an onboarded
// tool's OpenAPI spec from the airlock's files, or a module tool's
// GET {module}/manifest.
type sourceDocs struct {
	files   *airlock.Files    // nil without the airlock
	modules map[string]string // module name -> base URL
	client  *http.Client
}

// maxModuleDocument bounds a module manifest read for kb.get_document.
const maxModuleDocument = 8 << 20

func (s sourceDocs) SourceDocument(ctx context.Context, t graph.Tool, m tool.Manifest) (string, []byte, error) {
	if m.Source != nil && m.Source.Origin == "openapi" {
		if s.files == nil {
			return "", nil, fmt.Errorf("the airlock is not configured here: %w", fault.ErrNotFound)
		}
		b, err := s.files.SourceSpec(ctx, t.ID)
		return "openapi", b, err
	}
	base, ok := s.modules[t.Module]
	if t.Module == "" || !ok {
		return "", nil, fmt.Errorf("tool %q has no source document here (module %q): %w", t.ID, t.Module, fault.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/manifest", nil)
	if err != nil {
		return "", nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("module %s: %w: %w", t.Module, fault.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("module %s answered GET /manifest with %d: %w", t.Module, resp.StatusCode, fault.ErrUnavailable)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxModuleDocument))
	return "module-manifest", b, err
}
