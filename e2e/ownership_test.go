package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/workflows"
)

// TestVerbRunBelongsToItsCaller runs a verb on the real Temporal server as
// one user: another user's GET answers 404 (the owner is read back from the
// run's memo), the owner and an admin read it, and the
// audit log holds the run's write-ahead record beside the call's.
func TestVerbRunBelongsToItsCaller(t *testing.T) {
	e := newEnv(t)
	ana := http.Header{"Authorization": {"Bearer " + e.key(identity.NewKey{Owner: "ana", Level: "user", Groups: []string{access.Wildcard}})}}
	bob := http.Header{"Authorization": {"Bearer " + e.key(identity.NewKey{Owner: "bob", Level: "user", Groups: []string{access.Wildcard}})}}
	var run verbs.Run
	if code := e.do(http.MethodPost, "/api/v1/verbs?wait=30s", convertBody, ana, &run); code != http.StatusOK || run.Status != workflows.StatusCompleted {
		t.Fatalf("ana's verb: HTTP %d status %q error %q", code, run.Status, run.Error)
	}
	if id := strings.TrimPrefix(run.WorkflowID, "verb-CONVERT_CURRENCY-"); len(id) != 32 {
		t.Errorf("workflow ID %q: want 128 random bits", run.WorkflowID)
	}
	path := "/api/v1/verbs/" + run.WorkflowID
	var got verbs.Run
	if code := e.do(http.MethodGet, path, nil, bob, &got); code != http.StatusNotFound || got.Result != nil {
		t.Errorf("bob reads ana's run: HTTP %d %+v, want 404", code, got)
	}
	for name, h := range map[string]http.Header{"ana": ana, "admin": nil} {
		var r verbs.Run
		if code := e.do(http.MethodGet, path, nil, h, &r); code != http.StatusOK || r.Status != workflows.StatusCompleted {
			t.Errorf("%s reads ana's run: HTTP %d %+v", name, code, r)
		}
	}

	page, err := e.store.AuditEvents(context.Background(), graph.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var intent, call *graph.AuditEvent
	for i, ev := range page.Items {
		switch {
		case ev.Action == "verbs.start" && strings.Contains(ev.Detail, run.WorkflowID):
			intent = &page.Items[i]
		case ev.Action == "verbs" && ev.Outcome == graph.AuditSuccess:
			call = &page.Items[i]
		}
	}
	if intent == nil || call == nil {
		t.Fatalf("audit lacks the intent (%v) or the call (%v): %+v", intent, call, page.Items)
	}
	if intent.Outcome != graph.AuditIntent || intent.RequestID == "" || intent.RequestID != call.RequestID || intent.Actor != call.Actor {
		t.Errorf("intent %+v does not pair with the call %+v", *intent, *call)
	}
}
