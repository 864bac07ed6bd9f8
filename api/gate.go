package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/ratelimit"
)

// Recorder writes audit events (an *audit.Log).
type Recorder = audit.Recorder

// Gate is the one place the authorization table is applied. The server's
// middleware asks it for every request; the console, which reaches the
// domain services without the router, names for each of its actions the
// API route it stands for and asks it the same way. A route's row decides
// alike for both: its rule (checked for the principal, and again for the
// principal as the caller a trusted gateway narrowed it to), its
// rate-limit class, and whether the call is audited; the console's audit
// records say the call came through the console. There is one table, Rules.
type Gate struct {
	rules   map[string]RouteRule
	audit   Recorder
	limiter *ratelimit.Limiter
	// log receives audit writes that failed (nil: they are dropped).
	log *slog.Logger
}

// NewGate returns the gate over rules (nil: Rules), writing audit records
// to rec (nil: none) and taking rate limits from limiter (nil: none).
func NewGate(rules []RouteRule, rec Recorder, limiter *ratelimit.Limiter) *Gate {
	if rules == nil {
		rules = Rules
	}
	return &Gate{rules: ruleIndex(rules), audit: rec, limiter: limiter}
}

// Call is one call of a route of the table, from any edge.
type Call struct {
	// Method and Route name the row: a route template of Rules, such as
	// "/api/v1/tools/pending/:id/approve".
	Method, Route string
	Principal     identity.Principal
	// Header holds a trusted gateway's narrowing headers (identity.Narrow);
	// nil narrows nothing.
	Header http.Header
	// Addr is the client's address, which counts a guest's rate limits.
	Addr string
	// Tool names what the call is about (a tool, review, key or source)
	// in its audit records.
	Tool      string
	RequestID string
	// Via names the edge in the audit records' detail ("console"); "" is
	// the API itself.
	Via string
}

// What refused a call (Decision.Refused).
const (
	RefusedNoRow  = "no-row" // the route has no row: a programming error
	RefusedRule   = "rule"   // the row's rule refused the principal or its acting user
	RefusedNarrow = "narrow" // the narrowing headers asked for more than the principal has
	RefusedLimit  = "limit"  // the row's rate limit is spent (the error is a *ratelimit.Error)
)

// Decision is what the table decided for a call.
type Decision struct {
	Row RouteRule
	// Caller is the principal as narrowed (set once narrowing passed).
	Caller access.Caller
	// Err is nil when the call may go ahead; Refused says which check
	// refused it.
	Err     error
	Refused string
}

// Decide applies the call's row: the rule for the principal, the
// narrowing, the rule again for the principal acting as the narrowed
// caller, then the rate limit. A refusal on an audited row is audited
// (outcome denied). A route without a row is refused, with an error that
// says so.
func (g *Gate) Decide(ctx context.Context, c Call) Decision {
	row, err := g.Row(c.Method, c.Route)
	if err != nil {
		return Decision{Err: err, Refused: RefusedNoRow}
	}
	d := Decision{Row: row}
	p := c.Principal
	if err := row.Rule.Check(p); err != nil {
		return g.refuse(ctx, c, d, RefusedRule, err)
	}
	caller, err := identity.Narrow(p, c.Header)
	if err != nil {
		return g.refuse(ctx, c, d, RefusedNarrow, err)
	}
	// A trusted gateway acting for an end user is authorized as that user.
	if err := row.Rule.Check(p.Acting(caller)); err != nil {
		return g.refuse(ctx, c, d, RefusedRule, err)
	}
	d.Caller = caller
	if row.Limit != "" {
		if err := g.limiter.Take(row.Limit, p, c.Addr); err != nil {
			return g.refuse(ctx, c, d, RefusedLimit, err)
		}
	}
	return d
}

// Row is the table's row of method and route; a route without one is a
// programming error, which the error says how to mend.
func (g *Gate) Row(method, route string) (RouteRule, error) {
	row, ok := g.rules[method+" "+route]
	if !ok {
		return RouteRule{}, fmt.Errorf("api: no authorization rule for %s %s (add a row to api.Rules)", method, route)
	}
	return row, nil
}

func (g *Gate) refuse(ctx context.Context, c Call, d Decision, why string, err error) Decision {
	d.Err, d.Refused = err, why
	if d.Row.Audit {
		status, _ := httpx.Status(err)
		g.write(ctx, c, d.Row, audit.Action(d.Row.Method, d.Row.Path), graph.AuditDenied, status, err.Error(), nil)
	}
	return d
}

// Done audits a call Decide admitted, when its row says so, with the
// answer's status and detail; tools, when set, are the tools the call
// wrote (one record each; otherwise one record naming Call.Tool).
func (g *Gate) Done(ctx context.Context, c Call, row RouteRule, status int, detail string, tools []string) {
	if row.Audit {
		g.write(ctx, c, row, audit.Action(row.Method, row.Path), outcomeOf(status), status, detail, tools)
	}
}

// AuthFailed audits a refused credential presented for the call's route;
// refused credentials are audited on every route.
func (g *Gate) AuthFailed(ctx context.Context, c Call, err error) {
	row, ok := g.rules[c.Method+" "+c.Route]
	if !ok {
		return
	}
	c.Principal = identity.Anonymous()
	g.write(ctx, c, row, "auth.failed", graph.AuditDenied, http.StatusUnauthorized, err.Error(), nil)
}

// auditTimeout bounds writing a call's audit record once the call is done.
const auditTimeout = 10 * time.Second

// write records the call's audit event, one per tool. A failure to audit
// is logged and changes nothing the caller gets. The write does not use
// the call's context: a client that hangs up (say during ?wait=) has
// still had its call made, and the record must be written all the same.
func (g *Gate) write(ctx context.Context, c Call, row RouteRule, action, outcome string, status int, detail string, tools []string) {
	if g.audit == nil {
		return
	}
	if c.Via != "" {
		detail = strings.TrimSuffix(c.Via+"; "+detail, "; ")
	}
	if len(tools) == 0 {
		tools = []string{c.Tool}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	p := c.Principal
	for _, tool := range tools {
		e := graph.AuditEvent{
			Actor: p.Subject, ActorName: p.Name, Method: p.Method, Action: action, Tool: tool,
			Outcome: outcome, Status: status, RequestID: c.RequestID,
			Route: row.Method + " " + row.Path, Detail: detail,
		}
		if err := g.audit.Record(ctx, e); err != nil && g.log != nil {
			g.log.ErrorContext(ctx, "audit record failed", "action", action, "tool", tool, "err", err)
		}
	}
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

// The console's side of the gate (web.Gate): the same Decide and Done,
// with the console named in the audit records.

// Allow decides a console call of method and route (a route template of
// Rules) by p from addr, about tool; see Decide.
func (g *Gate) Allow(ctx context.Context, method, route, tool string, p identity.Principal, addr string) error {
	return g.Decide(ctx, consoleCall(method, route, tool, p, addr)).Err
}

// Permits is the rule of the route's row for p, and nothing else: no rate
// limit is taken and nothing is audited. The console's menu asks it which
// pages to offer, so it offers none whose row refuses the key.
func (g *Gate) Permits(_ context.Context, method, route string, p identity.Principal) error {
	row, err := g.Row(method, route)
	if err != nil {
		return err
	}
	return row.Rule.Check(p)
}

// Record audits a console call that Allow admitted, when its route's row
// says so: err nil is a success, otherwise the outcome its status maps to.
func (g *Gate) Record(ctx context.Context, method, route string, p identity.Principal, tool string, err error) {
	row, ok := g.rules[method+" "+route]
	if !ok {
		return
	}
	status, detail := http.StatusOK, ""
	if err != nil {
		status, _ = httpx.Status(err)
		detail = err.Error()
	}
	g.Done(ctx, consoleCall(method, route, tool, p, ""), row, status, detail, nil)
}

// RecordAuthFailure audits a credential refused at the console's sign-in,
// as the server audits one presented for route.
func (g *Gate) RecordAuthFailure(ctx context.Context, method, route string, err error) {
	g.AuthFailed(ctx, consoleCall(method, route, "", identity.Anonymous(), ""), err)
}

// ViaConsole names the console in its calls' audit records.
const ViaConsole = "console"

func consoleCall(method, route, tool string, p identity.Principal, addr string) Call {
	return Call{Method: method, Route: route, Principal: p, Addr: addr, Tool: tool, Via: ViaConsole}
}
