package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/admin"
	apiairlock "github.com/toolsmith/toolsmith/api/airlock"
	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	apibuilds "github.com/toolsmith/toolsmith/api/builds"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/api/ranking"
	apiretrieval "github.com/toolsmith/toolsmith/api/retrieval"
	"github.com/toolsmith/toolsmith/api/tools"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/ratelimit"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/web"
)

// noTemporal is a Temporal client that is never reached: every request of
// the route walk stops at authentication or authorization.
type noTemporal struct{ t *testing.T }

func (n noTemporal) fail() { n.t.Error("a refused request reached Temporal") }
func (n noTemporal) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	n.fail()
	return nil, context.Canceled
}
func (n noTemporal) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	n.fail()
	return nil
}
func (n noTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	n.fail()
	return nil, context.Canceled
}
func (n noTemporal) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	n.fail()
	return nil, context.Canceled
}
func (n noTemporal) SignalWorkflow(context.Context, string, string, string, any) error {
	n.fail()
	return context.Canceled
}
func (n noTemporal) UpdateWorkflow(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	n.fail()
	return nil, context.Canceled
}
func (n noTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	n.fail()
	return nil, context.Canceled
}

type noNotes struct{}

func (noNotes) List(context.Context, int) ([]airlock.Notification, error) { return nil, nil }

type noEnabler struct{ t *testing.T }

func (n noEnabler) Enable(context.Context, string, string) ([]string, error) {
	n.t.Error("a refused request enabled tools")
	return nil, nil
}

// fullServer is the production server with every feature mounted (the
// same set cmd/toolsmith mounts), on a real SQLite store.
func fullServer(t *testing.T) (*api.Server, *identity.KeyService, *sqlite.Store) {
	return fullServerWith(t, metrics.New())
}

func fullServerWith(t *testing.T, m *metrics.Metrics) (*api.Server, *identity.KeyService, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	emb := hashing.New(64)
	if err := st.EnsureEmbedder(context.Background(), graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
		t.Fatal(err)
	}
	search := retrieval.New(st, emb, retrieval.Options{Observer: m})
	reg := registry.New(st, emb, registry.WithOnChange(search.Invalidate))
	keys := identity.NewKeyService(st)
	log := audit.New(st)
	tc := noTemporal{t}
	runs := verbs.New(tc, st, verbs.Config{})
	models, err := retrain.New(st, emb, search, retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reviews := review.New(tc, st, review.Config{})
	features := []httpx.Mounter{
		tools.New(reg), apiretrieval.New(search), admin.New(keys, log), ranking.New(models, tc, ""),
		runs, apianalytics.New(st, nil), apiairlock.New(reviews).WithOperations(noNotes{}, noEnabler{t}),
		apibuilds.New(&fulfil.Builds{Temporal: tc, Gaps: st}),
	}
	auth := &identity.Authenticator{Keys: keys}
	limiter := ratelimit.New(ratelimit.Config{}, m.RateLimited) // one budget for both doors, as cmd/toolsmith wires it
	console := web.New(web.Deps{Sessions: st, Auth: auth, Keys: keys, Gate: api.NewGate(nil, log, limiter), Audit: log, Registry: reg,
		Retrieval: search, Store: st, Models: models, Reviews: reviews, Notes: noNotes{}, Enabler: noEnabler{t}}, web.Config{})
	edge := mcp.New(mcp.Deps{Auth: auth, Retrieval: search, Store: st, Fulfil: runs.Service(), Audit: log, Metrics: m, Limiter: limiter})
	srv, _ := newServer(t, api.Options{Auth: auth, Audit: log, Metrics: m, Limiter: limiter, BaseURL: "http://ts.example",
		Handlers: []api.Handler{{Methods: []string{http.MethodGet, http.MethodPost, http.MethodDelete}, Path: "/mcp", Handler: edge.Handler()},
			{Methods: []string{http.MethodGet}, Path: "/ui", Handler: console},
			{Methods: []string{http.MethodGet, http.MethodPost}, Path: "/ui/*path", Handler: console},
			{Methods: []string{http.MethodGet}, Path: "/favicon.ico", Handler: console}}}, features...)
	return srv, keys, st
}

// concrete turns a route template into a path to request.
func concrete(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "x1"
		}
	}
	return strings.Join(parts, "/")
}

// TestEveryRouteHasARule walks the server's own route list: every route
// needs a row of the authorization table, every row a route, and every
// route that is not public answers 401 without a credential (and with a
// bad one) and 403 with a valid but insufficient one.
func TestEveryRouteHasARule(t *testing.T) {
	srv, keys, st := fullServer(t)
	rules := map[string]api.RouteRule{}
	for _, r := range api.Rules {
		k := r.Method + " " + r.Path
		if _, dup := rules[k]; dup {
			t.Errorf("the authorization table has two rows for %s", k)
		}
		rules[k] = r
	}
	routes := srv.Routes()
	if len(routes) < 30 {
		t.Fatalf("only %d routes: is every feature mounted?", len(routes))
	}
	served := map[string]bool{}
	guest := identitytest.Bearer(t, keys, identity.NewKey{Owner: "guest", Level: "guest"})
	user := identitytest.Bearer(t, keys, identity.NewKey{Owner: "ana", Level: "user", Roles: []string{"analyst"}, Permissions: []string{"tools:read"}})
	revoked := identitytest.Bearer(t, keys, identity.NewKey{Owner: "gone", Level: "owner"})
	if err := keys.Revoke(context.Background(), identity.Principal{}, strings.Split(revoked, "_")[1]); err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	call := func(method, path, auth string) int {
		req := httptest.NewRequest(method, path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		// Claims in headers never count.
		req.Header.Set("X-Permission-Level", "owner")
		req.Header.Set("X-User-Id", "root")
		req.Header.Set("X-User-Roles", "approver")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, rt := range routes {
		k := rt.Method + " " + rt.Path
		served[k] = true
		rule, ok := rules[k]
		if !ok {
			t.Errorf("route %s has no rule in api.Rules", k)
			continue
		}
		if rule.Rule.Anonymous {
			continue
		}
		path := concrete(rt.Path)
		if code := call(rt.Method, path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without a credential: %d, want 401", k, code)
		}
		for _, bad := range []string{"Bearer tsk_k0123456789ab_" + strings.Repeat("x", 43), revoked, "Bearer not-a-key", "Basic YTpi"} {
			if code := call(rt.Method, path, bad); code != http.StatusUnauthorized {
				t.Errorf("%s with %q: %d, want 401", k, bad[:min(len(bad), 20)], code)
			}
		}
		if rule.Rule.MinLevel != "" {
			for _, weak := range []string{guest, user} {
				if code := call(rt.Method, path, weak); code != http.StatusForbidden {
					t.Errorf("%s with an insufficient key: %d, want 403 (rule %s)", k, code, rule.Rule.Name)
				}
			}
		}
	}
	// Refused credentials are audited; nothing else was written.
	page, err := st.AuditEvents(context.Background(), graph.AuditQuery{Action: "auth.failed", Limit: 1000})
	if err != nil || len(page.Items) == 0 {
		t.Errorf("refused credentials left no audit events: %v", err)
	}
	for _, e := range page.Items {
		if e.Outcome != graph.AuditDenied || e.Status != http.StatusUnauthorized || e.RequestID == "" {
			t.Errorf("audit of a refused credential: %+v", e)
			break
		}
	}
	if n, _ := st.Stats(context.Background()); n.Tools != 0 {
		t.Errorf("refused requests wrote %d tools", n.Tools)
	}
	for k := range rules {
		if !served[k] {
			t.Errorf("api.Rules has a row for %s, which no feature serves", k)
		}
	}
}

// TestMetricsScrape scrapes /metrics after some traffic and parses it with
// the Prometheus text parser.
func TestMetricsScrape(t *testing.T) {
	m := metrics.New()
	m.WatchGroups(func(context.Context) (map[string]int, error) { return map[string]int{"default": 3, "travel": 1}, nil }, time.Second)
	srv, keys, _ := fullServerWith(t, m)
	h := srv.Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Level: "admin", Groups: []string{"*"}})
	get := func(path, auth string, hdr ...string) reply {
		return send(t, h, http.MethodGet, path, auth, "", hdr...)
	}
	for i := 0; i < 2; i++ { // the second is a cache hit
		if r := get("/api/v1/tools/retrieval/search?q=book+a+flight", admin, "X-Tool-Groups", "default,travel"); r.code != http.StatusOK {
			t.Fatalf("search: %d %s", r.code, r.raw)
		}
	}
	get("/api/v1/admin/keys", "Bearer tsk_k000000000000_"+strings.Repeat("A", 43))
	if r := get("/metrics", ""); r.code != http.StatusUnauthorized {
		t.Fatalf("anonymous /metrics: %d", r.code)
	}
	r := get("/metrics", admin)
	if r.code != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", r.code, r.header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(r.raw))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	has := func(name string, labels map[string]string) bool {
		f, ok := families[name]
		if !ok {
			return false
		}
	metrics:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue metrics
				}
			}
			return true
		}
		return false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"toolsmith_http_requests_total", map[string]string{"route": "/api/v1/tools/retrieval/search", "code": "200", "method": "GET"}},
		{"toolsmith_http_request_duration_seconds", map[string]string{"route": "/api/v1/tools/retrieval/search"}},
		{"toolsmith_search_duration_seconds", nil},
		{"toolsmith_search_cache_total", map[string]string{"result": "hit"}},
		{"toolsmith_embedding_duration_seconds", nil},
		{"toolsmith_auth_failures_total", nil},
		{"agent_tool_group_requests_total", map[string]string{"group": "travel"}},
		{"agent_tool_group_availability", nil},
		{"go_goroutines", nil},
	} {
		if !has(c.name, c.labels) {
			t.Errorf("/metrics lacks %s%v", c.name, c.labels)
		}
	}
}

// TestEveryRouteRefusesUnknownQuery: a query parameter a route does not
// read is a 400 naming it, on every route but the few that parse their
// own, and the table of parameters names only served routes.
func TestEveryRouteRefusesUnknownQuery(t *testing.T) {
	srv, keys, st := fullServer(t)
	owner := identitytest.Bearer(t, keys, identity.NewKey{Owner: "root", Level: "owner", Groups: []string{"*"}})
	h := srv.Handler()
	served := map[string]bool{}
	for _, rt := range srv.Routes() {
		k := rt.Method + " " + rt.Path
		served[k] = true
		if api.AnyQuery[k] {
			continue
		}
		r := send(t, h, rt.Method, concrete(rt.Path)+"?limt=5", owner, "{}")
		if r.code != http.StatusBadRequest || !strings.Contains(r.raw, `limt`) {
			t.Errorf("%s?limt=5: %d %s, want 400 naming limt", k, r.code, r.raw)
		}
	}
	for k := range api.Queries {
		if !served[k] {
			t.Errorf("api.Queries lists %s, which no feature serves", k)
		}
	}
	for k := range api.AnyQuery {
		if !served[k] {
			t.Errorf("api.AnyQuery lists %s, which no feature serves", k)
		}
	}
	if n, _ := st.Stats(context.Background()); n.Tools != 0 {
		t.Errorf("refused requests wrote %d tools", n.Tools)
	}
	// A parameter the route reads passes the check; a list parameter may
	// repeat, any other may not.
	if r := send(t, h, http.MethodGet, "/api/v1/tools?limit=5&status=active&status=deprecated", owner, ""); r.code != http.StatusOK {
		t.Errorf("GET /api/v1/tools?limit=5&status=…&status=…: %d %s", r.code, r.raw)
	}
	if r := send(t, h, http.MethodGet, "/api/v1/tools?limit=5&limit=7", owner, ""); r.code != http.StatusBadRequest || !strings.Contains(r.raw, "more than once") {
		t.Errorf("GET /api/v1/tools?limit=5&limit=7: %d %s, want 400", r.code, r.raw)
	}
}
