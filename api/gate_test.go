package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/ratelimit"
)

type events struct {
	mu  sync.Mutex
	got []graph.AuditEvent
}

func (e *events) Record(_ context.Context, ev graph.AuditEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
	return nil
}

func (e *events) take() []graph.AuditEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.got
	e.got = nil
	return out
}

// TestGateDecides: the one decision both edges use (the server's
// middleware and the console): the rule, the narrowing, the rule for the
// acting user, the rate limit, and the audit record of a refusal on an
// audited row, naming the edge the call came through.
func TestGateDecides(t *testing.T) {
	rules := []api.RouteRule{
		{Method: "GET", Path: "/open", Rule: identity.RulePublic},
		{Method: "POST", Path: "/admin/:id", Rule: identity.RuleAdmin, Audit: true},
		{Method: "POST", Path: "/run", Rule: identity.RuleAuthenticated, Limit: api.LimitExecute, Audit: true},
	}
	rec := &events{}
	gate := api.NewGate(rules, rec, ratelimit.New(ratelimit.Config{ExecutePerMinute: 1}, nil))
	ctx := context.Background()
	user := identity.Principal{Subject: "key:u", Method: identity.MethodAPIKey, Level: "user", Groups: []string{"default"}}
	admin := identity.Principal{Subject: "key:a", Method: identity.MethodAPIKey, Level: "admin"}
	gateway := identity.Principal{Subject: "key:g", Method: identity.MethodAPIKey, Level: "admin", TrustedGateway: true}
	status := func(err error) int {
		if err == nil {
			return http.StatusOK
		}
		s, _ := httpx.Status(err)
		return s
	}
	for _, c := range []struct {
		name    string
		call    api.Call
		refused string
		status  int
		audited bool
	}{
		{"a guest on a public row", api.Call{Method: "GET", Route: "/open", Principal: identity.Anonymous()}, "", 200, false},
		{"a user on an admin row", api.Call{Method: "POST", Route: "/admin/:id", Principal: user, Tool: "k1"}, api.RefusedRule, 403, true},
		{"a guest on an admin row", api.Call{Method: "POST", Route: "/admin/:id", Principal: identity.Anonymous()}, api.RefusedRule, 401, true},
		{"an admin", api.Call{Method: "POST", Route: "/admin/:id", Principal: admin}, "", 200, false},
		{"a gateway acting as a user", api.Call{Method: "POST", Route: "/admin/:id", Principal: gateway,
			Header: http.Header{"X-Permission-Level": {"user"}}}, api.RefusedRule, 403, true},
		{"groups the key lacks", api.Call{Method: "GET", Route: "/open", Principal: user,
			Header: http.Header{"X-Tool-Groups": {"secret"}}}, api.RefusedNarrow, 403, false},
		{"no row", api.Call{Method: "GET", Route: "/nowhere", Principal: admin}, api.RefusedNoRow, 500, false},
		{"the first call of a limited row", api.Call{Method: "POST", Route: "/run", Principal: user}, "", 200, false},
		{"the second", api.Call{Method: "POST", Route: "/run", Principal: user, Via: api.ViaConsole}, api.RefusedLimit, 429, true},
	} {
		d := gate.Decide(ctx, c.call)
		if d.Refused != c.refused || status(d.Err) != c.status || (d.Err == nil) != (c.refused == "") {
			t.Errorf("%s: refused %q (%v, %d), want %q (%d)", c.name, d.Refused, d.Err, status(d.Err), c.refused, c.status)
		}
		got := rec.take()
		if !c.audited {
			if len(got) != 0 {
				t.Errorf("%s: audited %+v", c.name, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s: %d audit records, want 1", c.name, len(got))
			continue
		}
		e := got[0]
		if e.Outcome != graph.AuditDenied || e.Status != c.status || e.Actor != c.call.Principal.Subject || e.Tool != c.call.Tool ||
			e.Route != c.call.Method+" "+c.call.Route || !strings.Contains(e.Detail, d.Err.Error()) ||
			strings.HasPrefix(e.Detail, "console; ") != (c.call.Via == api.ViaConsole) {
			t.Errorf("%s: audit record %+v", c.name, e)
		}
	}
	var lim *ratelimit.Error
	if d := gate.Decide(ctx, api.Call{Method: "POST", Route: "/run", Principal: user}); !errors.As(d.Err, &lim) || d.Caller.UserID != user.Subject {
		t.Errorf("a spent limit: %v, caller %+v", d.Err, d.Caller)
	}
	rec.take()

	// An admitted call's outcome: one record per tool it wrote, the
	// outcome its status maps to.
	row, err := gate.Row("POST", "/admin/:id")
	if err != nil {
		t.Fatal(err)
	}
	gate.Done(ctx, api.Call{Method: "POST", Route: "/admin/:id", Principal: admin, Tool: "k1", RequestID: "r1"}, row, 200, "", []string{"t1", "t2"})
	gate.Done(ctx, api.Call{Method: "POST", Route: "/admin/:id", Principal: admin, Tool: "k1"}, row, 409, "taken", nil)
	gate.Record(ctx, "POST", "/admin/:id", admin, "k2", nil)
	got := rec.take()
	want := []struct{ tool, outcome, detail, rid string }{
		{"t1", graph.AuditSuccess, "", "r1"}, {"t2", graph.AuditSuccess, "", "r1"}, {"k1", graph.AuditFailed, "taken", ""},
		{"k2", graph.AuditSuccess, "console", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if e := got[i]; e.Tool != w.tool || e.Outcome != w.outcome || e.Detail != w.detail || e.RequestID != w.rid || e.Action == "" {
			t.Errorf("record %d: %+v, want %+v", i, e, w)
		}
	}
	gate.RecordAuthFailure(ctx, "POST", "/admin/:id", errors.New("bad key"))
	if got := rec.take(); len(got) != 1 || got[0].Action != "auth.failed" || got[0].Outcome != graph.AuditDenied ||
		got[0].Status != http.StatusUnauthorized || got[0].Detail != "console; bad key" {
		t.Errorf("a refused credential at the console: %+v", got)
	}
}
