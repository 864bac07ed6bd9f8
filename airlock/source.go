package airlock

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/toolsmith/toolsmith/internal/fault"
)

var hashPrefixRE = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

// SourceSpec returns the OpenAPI document an onboarded tool came from: the
// approval of its wrapper (the tool id's first segment) records the spec's
// hash; an approval recorded before it did names the review, whose id
// ("airlock-" and the hash's first 16 digits) finds the stored spec.
// With Files.Shared the store's approval answers first, with its spec.
// Unknown tools are fault.ErrNotFound.
func (f *Files) SourceSpec(ctx context.Context, toolID string) ([]byte, error) {
	slug, _, ok := strings.Cut(toolID, ".")
	if !ok || slug == "" {
		return nil, fmt.Errorf("airlock: %q is not an onboarded tool id: %w", toolID, fault.ErrNotFound)
	}
	// The store's approval, wherever it was made, carries its spec.
	if sa, ok, err := f.sharedApproval(ctx, slug); err != nil {
		return nil, err
	} else if ok {
		return []byte(sa.Spec), nil
	}
	a, err := f.Approval(slug)
	if err != nil {
		return nil, err
	}
	if a.SpecHash != "" {
		return f.Spec(ctx, a.SpecHash)
	}
	prefix := strings.TrimPrefix(a.ID, "airlock-")
	if !hashPrefixRE.MatchString(prefix) {
		return nil, fmt.Errorf("airlock: approval %q names no spec: %w", a.ID, fault.ErrNotFound)
	}
	matches, err := filepath.Glob(filepath.Join(f.Root, "specs", prefix+"*"))
	if err != nil {
		return nil, fmt.Errorf("airlock: find spec %s: %w", prefix, err)
	}
	var found []string
	for _, m := range matches {
		if hashRE.MatchString(filepath.Base(m)) {
			found = append(found, filepath.Base(m))
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("airlock: approval %q: %d stored specs match: %w", a.ID, len(found), fault.ErrNotFound)
	}
	return f.Spec(ctx, found[0])
}
