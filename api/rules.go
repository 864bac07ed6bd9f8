package api

import (
	"slices"
	"sort"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/ratelimit"
)

// Limit classes: per-caller rate limits apply to the routes of a class,
// from the same buckets as the MCP tools of the class (see ratelimit).
const (
	LimitSearch  = ratelimit.Search
	LimitExecute = ratelimit.Execute
	LimitVerbs   = ratelimit.Verbs
)

// RouteRule is one row of the authorization table: who may call a route,
// which rate limit applies and whether calls are audited.
type RouteRule struct {
	Method string
	Path   string
	Rule   identity.Rule
	// Limit is the rate-limit class ("" = none).
	Limit string
	// Audit records every call in the audit log (mutations, executions and
	// decisions); refused credentials are audited on every route.
	Audit bool
}

// Rules is the authorization table of every route the server serves. The
// server reads it for each request: a route without a row answers 500 and a
// test fails (see TestEveryRouteHasARule). Tool-level visibility (a tool's
// permissions, groups, states and approval policy) applies on top, in the
// domain: execute follows the tool's own rules, reads never show a tool
// that execute would refuse.
var Rules = []RouteRule{
	{"GET", "/healthz", identity.RulePublic, "", false},
	{"GET", "/metrics", identity.RuleMetrics, "", false},
	{"GET", "/api/v1", identity.RulePublic, "", false},
	// How to sign in (RFC 9728), read by MCP clients after a 401.
	{"GET", "/.well-known/oauth-protected-resource", identity.RulePublic, "", false},
	{"GET", "/.well-known/oauth-protected-resource/mcp", identity.RulePublic, "", false},

	// Registry: reads are public and filtered per tool.
	{"GET", "/api/v1/tools", identity.RulePublic, "", false},
	{"GET", "/api/v1/tools/:toolId", identity.RulePublic, "", false},
	{"GET", "/api/v1/tools/:toolId/history", identity.RulePublic, "", false},
	{"POST", "/api/v1/tools/register", identity.RuleToolsWrite, "", true},
	{"POST", "/api/v1/tools/batch-register", identity.RuleToolsWrite, "", true},
	{"PUT", "/api/v1/tools/:toolId", identity.RuleToolsWrite, "", true},
	{"DELETE", "/api/v1/tools/:toolId", identity.RuleToolsWrite, "", true},

	// Retrieval.
	{"GET", "/api/v1/tools/retrieval/search", identity.RulePublic, LimitSearch, false},
	{"POST", "/api/v1/tools/search", identity.RulePublic, LimitSearch, false},
	{"GET", "/api/v1/tools/retrieval/manifest/:toolId", identity.RulePublic, "", false},
	{"GET", "/api/v1/tools/retrieval/related/:toolId", identity.RulePublic, "", false},
	// Recording uses teaches the shared ranking: a call counts against the
	// caller's execute limit (retrieval.RecordEvents bounds its size and
	// refuses guests).
	{"POST", "/api/v1/sessions/:id/events", identity.RuleAuthenticated, LimitExecute, true},
	{"POST", "/api/v1/tools/usage/batch", identity.RuleAuthenticated, LimitExecute, true},
	{"DELETE", "/api/v1/tools/admin/cache/invalidate", identity.RuleAdmin, "", true},
	{"POST", "/api/v1/tools/admin/reindex", identity.RuleAdmin, "", true},
	{"GET", "/api/v1/tools/admin/reindex/:id", identity.RuleAdmin, "", false},
	{"GET", "/api/v1/tools/admin/analytics", identity.RuleAdmin, "", false},
	{"GET", "/api/v1/tools/admin/series", identity.RuleAdmin, "", false},
	{"GET", "/api/v1/gaps", identity.RuleApprover, "", false},
	// Building a tool from scratch for a gap (reviewed on the pending routes).
	{"POST", "/api/v1/gaps/:id/build", identity.RuleApprover, "", true},
	{"GET", "/api/v1/builds/:id", identity.RuleApprover, "", false},

	// Execution and fulfilment: the route admits every caller; the tool's
	// own permissions and the approved policy decide (package access).
	{"POST", "/api/v1/tools/:toolId/execute", identity.RulePublic, LimitExecute, true},
	{"POST", "/api/v1/verbs", identity.RuleAuthenticated, LimitVerbs, true},
	{"GET", "/api/v1/verbs/:id", identity.RuleAuthenticated, "", false},
	{"POST", "/api/v1/modules/refresh", identity.RuleAdmin, "", true},

	// Airlock: onboarding external tools is admin work.
	{"POST", "/api/v1/tools/sources", identity.RuleAdmin, "", true},
	{"GET", "/api/v1/tools/sources", identity.RuleAdmin, "", false},
	{"POST", "/api/v1/tools/sources/scan", identity.RuleAdmin, "", true},
	{"DELETE", "/api/v1/tools/sources/:id", identity.RuleAdmin, "", true},
	{"GET", "/api/v1/tools/pending", identity.RuleApprover, "", false},
	{"GET", "/api/v1/tools/pending/:id", identity.RuleApprover, "", false},
	{"GET", "/api/v1/tools/pending/:id/timeline", identity.RuleApprover, "", false},
	{"GET", "/api/v1/tools/reviews", identity.RuleApprover, "", false},
	{"POST", "/api/v1/tools/pending/:id/approve", identity.RuleApprover, "", true},
	{"POST", "/api/v1/tools/pending/:id/reject", identity.RuleApprover, "", true},
	{"GET", "/api/v1/notifications", identity.RuleApprover, "", false},
	{"POST", "/api/v1/tools/:toolId/enable", identity.RuleAdmin, "", true},

	// Identity and operations.
	{"POST", "/api/v1/admin/keys", identity.RuleAdmin, "", true},
	{"GET", "/api/v1/admin/keys", identity.RuleAdmin, "", false},
	{"DELETE", "/api/v1/admin/keys/:id", identity.RuleAdmin, "", true},
	{"GET", "/api/v1/admin/audit", identity.RuleAdmin, "", false},
	// The learned ranking model's versions (retrieval/retrain).
	{"GET", "/api/v1/admin/ranking/versions", identity.RuleAdmin, "", false},
	{"POST", "/api/v1/admin/ranking/retrain", identity.RuleAdmin, "", true},
	{"GET", "/api/v1/admin/ranking/retrain/:id", identity.RuleAdmin, "", false},
	{"POST", "/api/v1/admin/ranking/versions/:id/rollback", identity.RuleAdmin, "", true},
	{"GET", "/api/v1/whoami", identity.RulePublic, "", false},

	// MCP (Streamable HTTP): every call is authenticated again from its
	// request and checked against the MCP edge's own table (mcp.Rules),
	// audited and counted there; refused credentials are refused here.
	{"GET", "/mcp", identity.RulePublic, "", false},
	{"POST", "/mcp", identity.RulePublic, "", false},
	{"DELETE", "/mcp", identity.RulePublic, "", false},

	// The review console: its pages sign in with a key into a cookie
	// session and call the domain services through a Gate over this same
	// table, each action checked (and audited) by the row of the API route
	// it stands for; the console's own door is open.
	{"GET", "/ui", identity.RulePublic, "", false},
	{"GET", "/ui/*path", identity.RulePublic, "", false},
	{"POST", "/ui/*path", identity.RulePublic, "", false},
	// The console's icon, where browsers look for it.
	{"GET", "/favicon.ico", identity.RulePublic, "", false},
}

// Queries lists the query parameters each route reads, by "METHOD path".
// A route not listed reads none: the security middleware answers any
// other parameter with a 400 naming it, so that a misspelt ?limt=5 or a
// parameter the route does not have is never silently ignored. The routes
// in AnyQuery parse their own (the console's pages, MCP, metrics).
var Queries = map[string][]string{
	"GET /api/v1/tools":                            {"limit", "cursor", "category", "status", "module", "sort"},
	"DELETE /api/v1/tools/:toolId":                 {"reason"},
	"GET /api/v1/tools/retrieval/search":           {"q", "context", "category", "strategy", "phase", "maxTools", "includeExamples", "format"},
	"GET /api/v1/tools/retrieval/manifest/:toolId": {"includeExamples", "includeRelationships", "includeAnalytics"},
	"GET /api/v1/tools/retrieval/related/:toolId":  {"relationshipType", "maxResults"},
	"GET /api/v1/tools/admin/analytics":            {"source", "top", "since"},
	"GET /api/v1/tools/admin/series":               {"prefix", "res", "since", "series"},
	"GET /api/v1/gaps":                             {"status", "limit"},
	"POST /api/v1/tools/:toolId/execute":           {"wait"},
	"POST /api/v1/verbs":                           {"wait"},
	"GET /api/v1/verbs/:id":                        {"runId"},
	"POST /api/v1/modules/refresh":                 {"wait"},
	"POST /api/v1/tools/sources":                   {"wait"},
	"GET /api/v1/tools/reviews":                    {"limit", "cursor"},
	"POST /api/v1/tools/pending/:id/approve":       {"wait"},
	"POST /api/v1/tools/pending/:id/reject":        {"wait"},
	"GET /api/v1/notifications":                    {"limit"},
	"GET /api/v1/admin/audit":                      {"limit", "actor", "action", "tool", "before", "since", "until"},
	"GET /api/v1/admin/ranking/versions":           {"limit"},
}

// AnyQuery are the routes whose query parameters the middleware leaves to
// the handler.
var AnyQuery = map[string]bool{
	"GET /metrics": true,
	"GET /mcp":     true, "POST /mcp": true, "DELETE /mcp": true,
	"GET /ui": true, "GET /ui/*path": true, "POST /ui/*path": true,
}

// unknownQuery names the first query parameter of the request that route
// does not read, "" when there is none.
func unknownQuery(method, route string, query map[string][]string) string {
	key := method + " " + route
	if AnyQuery[key] || len(query) == 0 {
		return ""
	}
	known := Queries[key]
	names := make([]string, 0, len(query))
	for name := range query {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !slices.Contains(known, name) {
			return name
		}
	}
	return ""
}

// Repeatable are the query parameters a route may take more than once
// (each value a list item); any other given twice is a 400, not silently
// its first value.
var Repeatable = map[string][]string{"GET /api/v1/tools": {"category", "status", "module"}}

// repeatedQuery names the first parameter given more than once that may
// not be, "" when there is none.
func repeatedQuery(method, route string, query map[string][]string) string {
	key := method + " " + route
	if AnyQuery[key] {
		return ""
	}
	names := make([]string, 0, len(query))
	for name, vals := range query {
		if len(vals) > 1 && !slices.Contains(Repeatable[key], name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) > 0 {
		return names[0]
	}
	return ""
}

// ruleIndex maps "METHOD path" to its row.
func ruleIndex(rules []RouteRule) map[string]RouteRule {
	idx := make(map[string]RouteRule, len(rules))
	for _, r := range rules {
		idx[r.Method+" "+r.Path] = r
	}
	return idx
}
