package airlock

import (
	"fmt"
	"strings"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// SourceSpec returns the OpenAPI document an onboarded tool came from: the
// approval of its wrapper (the tool id's first segment) names the review,
// whose id carries the spec's hash. Unknown tools are fault.ErrNotFound.
func (f *Files) SourceSpec(toolID string) ([]byte, error) {
	slug, _, ok := strings.Cut(toolID, ".")
	if !ok || slug == "" {
		return nil, fmt.Errorf("airlock: %q is not an onboarded tool id: %w", toolID, fault.ErrNotFound)
	}
	a, err := f.Approval(slug)
	if err != nil {
		return nil, err
	}
	hash := strings.TrimPrefix(a.ID, "airlock-")
	return f.Spec(hash)
}
