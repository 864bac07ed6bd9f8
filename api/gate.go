package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/ratelimit"
)

// Recorder writes audit events (an *audit.Log).
type Recorder interface {
	Record(ctx context.Context, e graph.AuditEvent) error
}

// Gate applies the authorization table to calls that reach the domain
// services without the server's router: the console names, for each of
// its actions, the API route it stands for, and that route's row decides
// exactly as it does for a request: its rule, its rate-limit class, and
// whether the call is audited (as the route's action, the detail saying
// it came through the console). There is one table, Rules.
type Gate struct {
	rules   map[string]RouteRule
	audit   Recorder
	limiter *ratelimit.Limiter
}

// NewGate returns the gate over rules (nil: Rules), writing audit records
// to rec (nil: none) and taking rate limits from limiter (nil: none).
func NewGate(rules []RouteRule, rec Recorder, limiter *ratelimit.Limiter) *Gate {
	if rules == nil {
		rules = Rules
	}
	return &Gate{rules: ruleIndex(rules), audit: rec, limiter: limiter}
}

// Allow checks the row of method and route (a route template of Rules,
// such as "/api/v1/tools/pending/:id/approve") for p calling from addr:
// its rule, then its rate limit. A refusal of an audited route is
// audited, naming tool (what the call is about, "" for nothing). A route
// without a row is refused, as the server refuses it.
func (g *Gate) Allow(ctx context.Context, method, route, tool string, p identity.Principal, addr string) error {
	row, ok := g.rules[method+" "+route]
	if !ok {
		return fmt.Errorf("api: no authorization rule for %s %s (add a row to api.Rules)", method, route)
	}
	err := row.Rule.Check(p)
	if err == nil && row.Limit != "" {
		err = g.limiter.Take(row.Limit, p, addr)
	}
	if err != nil && row.Audit {
		g.record(ctx, row, p, tool, err)
	}
	return err
}

// Record audits a call that Allow admitted, when its route's row says
// so: err nil is a success, otherwise the outcome its status maps to.
// tool names what the call was about (a review, a key, a source).
func (g *Gate) Record(ctx context.Context, method, route string, p identity.Principal, tool string, err error) {
	if row, ok := g.rules[method+" "+route]; ok && row.Audit {
		g.record(ctx, row, p, tool, err)
	}
}

func (g *Gate) record(ctx context.Context, row RouteRule, p identity.Principal, tool string, err error) {
	if g.audit == nil {
		return
	}
	status, detail := http.StatusOK, "console"
	if err != nil {
		status, _ = httpx.Status(err)
		detail = "console; " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	_ = g.audit.Record(ctx, graph.AuditEvent{
		Actor: p.Subject, ActorName: p.Name, Method: p.Method, Action: audit.Action(row.Method, row.Path), Tool: tool,
		Outcome: outcomeOf(status), Status: status, Route: row.Method + " " + row.Path, Detail: detail,
	})
}

// outcomeOf is the audit outcome of an answer's status.
func outcomeOf(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return graph.AuditDenied
	case status >= 500:
		return graph.AuditError
	case status >= 400:
		return graph.AuditFailed
	}
	return graph.AuditSuccess
}

// RecordAuthFailure audits a refused credential presented for route, as
// the server audits one on every route.
func (g *Gate) RecordAuthFailure(ctx context.Context, method, route string, err error) {
	row, ok := g.rules[method+" "+route]
	if !ok || g.audit == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	_ = g.audit.Record(ctx, graph.AuditEvent{Action: "auth.failed", Outcome: graph.AuditDenied, Status: http.StatusUnauthorized,
		Route: row.Method + " " + row.Path, Detail: "console; " + err.Error()})
}
