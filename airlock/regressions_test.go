package airlock

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/tool"
)

// TestRegressionCorpus onboards one small spec per airlock failure that was
// fixed (testdata/regressions): each must onboard every operation, its
// manifests must pass the registry's rules, its generated test must give
// the same result in five runs (the expensive half of the determinism
// property; codegen's TestGenerationIsDeterministic is the cheap half), and
// each repair must be a warning the reviewer sees.
func TestRegressionCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	ctx := context.Background()
	ob := testOnboarder(t, ctx)
	ob.Validate = func(m *tool.Manifest) error { tool.Normalize(m); return tool.Validate(m) }
	ob.TestRuns = 5
	var out, progress bytes.Buffer
	rep, err := Check(ctx, ob, "testdata/regressions", CheckOptions{Explain: true}, &out, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Specs < 13 || rep.Onboarded != rep.Specs || rep.Excluded != 0 || rep.Flaky != 0 {
		t.Fatalf("regression corpus: %+v\n%s", rep, out.String())
	}
	warned := map[string]bool{}
	for _, r := range rep.Rows {
		warned[r.Spec] = r.Warnings > 0
	}
	for _, spec := range []string{"version-not-semver.yaml", "required-twice.json", "text-bodies.yaml", "swagger2-schema-lists.json"} {
		if !warned[spec] {
			t.Errorf("%s: its repair is not a warning\n%s", spec, out.String())
		}
	}
	if !strings.Contains(out.String(), "0 flaky") {
		t.Errorf("summary: %s", out.String())
	}
}
