package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// auditPage reads GET /admin/audit?query as the admin.
func auditPage(t *testing.T, h http.Handler, auth, query string) graph.AuditPage {
	t.Helper()
	r := send(t, h, "GET", "/api/v1/admin/audit?"+query, auth, "")
	if r.code != http.StatusOK {
		t.Fatalf("audit %s: %d %s", query, r.code, r.raw)
	}
	var page graph.AuditPage
	b, _ := json.Marshal(r.body["data"])
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatal(err)
	}
	return page
}

// TestAuditNamesTheToolWritten: docs/identity.md's example query
// (action=tools.register&tool=lang.translate) finds the registration;
// a batch names each tool it wrote.
func TestAuditNamesTheToolWritten(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Owner: "ops", Level: "admin"})
	if r := send(t, h, "POST", "/api/v1/tools/register", admin, translateManifest); r.code != http.StatusCreated {
		t.Fatalf("register: %d %s", r.code, r.raw)
	}
	page := auditPage(t, h, admin, "action=tools.register&tool=lang.translate")
	if len(page.Items) != 1 || page.Items[0].Tool != "lang.translate" || page.Items[0].Outcome != graph.AuditSuccess {
		t.Fatalf("docs/identity.md's audit query: %+v", page.Items)
	}
	// A refused registration (a duplicate) names its tool too.
	if r := send(t, h, "POST", "/api/v1/tools/register", admin, translateManifest); r.code != http.StatusConflict {
		t.Fatalf("duplicate register: %d %s", r.code, r.raw)
	}
	if page := auditPage(t, h, admin, "action=tools.register&tool=lang.translate"); len(page.Items) != 2 || page.Items[0].Outcome == graph.AuditSuccess {
		t.Fatalf("after a refused duplicate: %+v", page.Items)
	}

	batch := `{"tools": [` + manifestFor("fx.convert", "CONVERT_CURRENCY") + `,` + manifestFor("fx.rates", "LIST_RATES") + `]}`
	if r := send(t, h, "POST", "/api/v1/tools/batch-register", admin, batch); r.code != http.StatusOK {
		t.Fatalf("batch: %d %s", r.code, r.raw)
	}
	for _, id := range []string{"fx.convert", "fx.rates"} {
		page := auditPage(t, h, admin, "action=tools.batch-register&tool="+id)
		if len(page.Items) != 1 || page.Items[0].Tool != id {
			t.Errorf("batch audit for %s: %+v", id, page.Items)
		}
	}
}

func manifestFor(id, verb string) string {
	return `{"manifest": {"toolId": "` + id + `", "verb": "` + verb + `", "name": "Tool ` + id + `",
		"description": "Does the thing that ` + id + ` does, for the audit test.", "category": "finance",
		"inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}}}}}`
}

// ctxRecorder records the events and whether their context was live.
type ctxRecorder struct {
	mu     sync.Mutex
	events []graph.AuditEvent
	errs   []error
}

func (r *ctxRecorder) Record(ctx context.Context, e graph.AuditEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		r.errs = append(r.errs, err)
		return err // what a store does with a cancelled context
	}
	r.events = append(r.events, e)
	return nil
}

// hangUp is an audited route whose client goes away while it works.
type hangUp struct{ cancel context.CancelFunc }

func (h hangUp) Mount(v1 *gin.RouterGroup) {
	v1.POST("/hangup", func(c *gin.Context) {
		h.cancel() // the client hangs up (e.g. during ?wait=) after the write happened
		c.Status(http.StatusAccepted)
	})
}

// TestAuditSurvivesTheCaller: the audit record of a call whose client
// hung up is written all the same.
func TestAuditSurvivesTheCaller(t *testing.T) {
	rec := &ctxRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, _ := newServer(t, api.Options{Audit: rec, Rules: []api.RouteRule{{Method: "POST", Path: "/api/v1/hangup", Rule: identity.RulePublic, Audit: true}}},
		hangUp{cancel})
	req := httptest.NewRequest("POST", "/api/v1/hangup", nil).WithContext(ctx)
	srv.Handler().ServeHTTP(httptest.NewRecorder(), req)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) > 0 || len(rec.events) != 1 || rec.events[0].Action != "hangup" {
		t.Fatalf("audit after the client hung up: events %+v, errors %v", rec.events, rec.errs)
	}
}

// TestAuditSinceInTheFutureIsRefused: the audit log's since follows the
// analytics' rule (analytics.CheckSince): more than SinceSkew ahead of the
// server's clock is a 400 naming since, not an empty page; within the
// skew, or with an until in the future, the log answers.
func TestAuditSinceInTheFutureIsRefused(t *testing.T) {
	srv, keys, _ := fullServer(t)
	owner := identitytest.Bearer(t, keys, identity.NewKey{Owner: "root", Level: "owner", Groups: []string{"*"}})
	h := srv.Handler()
	r := send(t, h, "GET", "/api/v1/admin/audit?since=2099-01-01T00:00:00Z", owner, "")
	if r.code != http.StatusBadRequest || !strings.Contains(r.raw, `"path":"since"`) || !strings.Contains(r.raw, "future") {
		t.Fatalf("since=2099: %d %s, want 400 naming since", r.code, r.raw)
	}
	soon := time.Now().Add(analytics.SinceSkew / 2).UTC().Format(time.RFC3339)
	auditPage(t, h, owner, "since="+soon)
	auditPage(t, h, owner, "until=2099-01-01T00:00:00Z")
}
