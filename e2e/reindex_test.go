package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/workflows"
)

// TestReindexWithProgress re-embeds every tool through ReindexWorkflow,
// polls its progress, and checks fulfilment still finds the right tool.
func TestReindexWithProgress(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	st, err := e.store.Stats(ctx)
	if err != nil || st.Tools == 0 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	before, err := e.store.History(ctx, "currency.convert")
	if err != nil {
		t.Fatal(err)
	}
	user := bearer(e.key(identity.NewKey{Owner: "ana", Level: "user"}))
	if code := e.do(http.MethodPost, "/api/v1/tools/admin/reindex", map[string]any{}, user, nil); code != http.StatusForbidden {
		t.Fatalf("reindex by a user: HTTP %d, want 403", code)
	}
	if code := e.post("/api/v1/tools/admin/reindex", map[string]any{"batchSize": 5000}, nil); code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		t.Fatalf("batchSize 5000: HTTP %d, want 4xx", code)
	}
	var started struct {
		ID, RunID, StatusURL string
	}
	// With no worker the first run stays running, so the second start
	// meets it: 409, as docs/operations.md says, not a second 202.
	e.stopWorker()
	if code := e.post("/api/v1/tools/admin/reindex", map[string]any{"batchSize": 3}, &started); code != http.StatusAccepted || started.RunID == "" {
		t.Fatalf("start reindex: HTTP %d %+v", code, started)
	}
	if code := e.post("/api/v1/tools/admin/reindex", map[string]any{"batchSize": 3}, nil); code != http.StatusConflict {
		t.Fatalf("second reindex start while one runs: HTTP %d, want 409", code)
	}
	e.startWorker()
	var p workflows.ReindexProgress
	eventually(t, 90*time.Second, func() error {
		if code := e.do(http.MethodGet, started.StatusURL, nil, nil, &p); code != http.StatusOK {
			t.Fatalf("progress: HTTP %d", code)
		}
		if p.Status == workflows.StatusRunning {
			return fmt.Errorf("reindex still running: %+v", p)
		}
		return nil
	})
	if p.Status != workflows.StatusCompleted || p.Done != st.Tools || len(p.Failed) != 0 || p.Total != st.Tools {
		t.Fatalf("reindex progress %+v, want completed with %d done", p, st.Tools)
	}
	var latest workflows.ReindexProgress
	if code := e.do(http.MethodGet, "/api/v1/tools/admin/reindex/latest", nil, nil, &latest); code != http.StatusOK || latest.Done != p.Done {
		t.Fatalf("latest: HTTP %d %+v", code, latest)
	}
	// A run id that is not a UUID is the caller's mistake (Temporal refuses
	// it as an invalid argument): 400, not 500.
	if code := e.do(http.MethodGet, "/api/v1/tools/admin/reindex/foo", nil, nil, nil); code != http.StatusBadRequest {
		t.Fatalf("reindex/foo: HTTP %d, want 400", code)
	}
	after, _ := e.store.History(ctx, "currency.convert")
	if len(after) != len(before)+1 {
		t.Fatalf("history %d -> %d revisions, want one more (the reindex)", len(before), len(after))
	}
	// The index still serves: the verb substitutes as before.
	var run verbRun
	if code := e.post("/api/v1/verbs?wait=30s", convertBody, &run); code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
		t.Fatalf("after reindex: HTTP %d %+v", code, run.Result)
	}
}
