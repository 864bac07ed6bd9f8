package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/internal/jsoncheck"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/ratelimit"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/workflows"
)

// Rules says who may call each MCP tool: the MCP edge's authorization
// table (data, like api.Rules). A tool without a row is refused, and
// TestEveryToolHasARule fails. Tool-level visibility (a Toolsmith tool's
// permissions, groups, states, approval policy) applies on top, as on REST.
var Rules = map[string]identity.Rule{
	"find_tools":           identity.RulePublic,
	"call_tool":            identity.RulePublic, // the tool's own permissions decide
	"fulfil_verb":          identity.RuleAuthenticated,
	"kb.hybrid_search":     identity.RulePublic,
	"kb.get_document":      identity.RulePublic,
	"kb.stats":             identity.RuleAdmin,
	"kb.list_collections":  identity.RulePublic,
	"kb.resolve_citations": identity.RulePublic,
	"kb.answer":            identity.RulePublic,
}

// Limits says which MCP tools take from which per-caller rate limit class:
// the same buckets as the REST routes of the class (api.Rules), when the
// edge and the server share one ratelimit.Limiter. Every catalogue tool
// (a Toolsmith tool exposed under its own name) counts as execute.
var Limits = map[string]string{
	"find_tools":       ratelimit.Search,
	"kb.hybrid_search": ratelimit.Search,
	"call_tool":        ratelimit.Execute,
	"fulfil_verb":      ratelimit.Verbs,
}

// Deps are the domain services the edge calls.
type Deps struct {
	// Auth authenticates each call from its request's Authorization
	// header; nil treats every caller as the anonymous guest.
	Auth      *identity.Authenticator
	Retrieval *retrieval.Service
	Store     graph.Store
	// Fulfil runs tools and verbs on Temporal; nil makes call_tool and
	// fulfil_verb answer that execution is not configured.
	Fulfil *fulfil.Service
	// Sources serves the documents tools came from (kb.get_document with
	// document "source"); nil answers that none is available.
	Sources DocumentSource
	// LLM answers kb.answer; nil makes it a tool error saying so.
	LLM     llms.Model
	Audit   audit.Recorder
	Metrics *metrics.Metrics
	// Limiter applies the per-caller rate limits (see Limits); pass the
	// REST server's so a key has one budget per class. Nil builds one with
	// the default limits.
	Limiter *ratelimit.Limiter
	// Proxies are the reverse proxies whose X-Forwarded-For names the
	// client of a call over Streamable HTTP; none by default.
	Proxies identity.Proxies
	Version string
	// Log receives the warnings of the catalogue (a stored tool it cannot
	// expose) and of find_tools (a found tool it cannot return); nil
	// discards them.
	Log *slog.Logger
	// MaxBodyBytes bounds a request body over Streamable HTTP (413 above
	// it), as --max-body-bytes bounds the API's; 0 is DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// CallTimeout bounds how long call_tool and fulfil_verb wait for an
	// outcome before answering with the run to poll (default 60s).
	CallTimeout time.Duration
}

// Edge is the MCP server.
type Edge struct {
	d      Deps
	server *sdk.Server
	cat    catalogue
	// decoders read a gateway tool's arguments into its input struct
	// (decodeArguments), by tool name; filled by add, read-only after New.
	decoders map[string]func(json.RawMessage) error
}

// New builds the MCP server with every tool registered.
func New(d Deps) *Edge {
	if d.CallTimeout <= 0 {
		d.CallTimeout = 60 * time.Second
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Limiter == nil {
		d.Limiter = ratelimit.New(ratelimit.Config{}, d.Metrics.RateLimited)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "toolsmith", Title: "Toolsmith tool knowledge graph", Version: d.Version}, &sdk.ServerOptions{
		Instructions: "Toolsmith finds and runs tools by intent. Call find_tools with what you want to do, " +
			"then call_tool with one of the returned toolIds and arguments that fit its inputSchema. " +
			"fulfil_verb asks Toolsmith to fulfil a capability it may not have yet.",
		SetCacheable: privateCache,
	})
	e := &Edge{d: d, server: s, cat: newCatalogue(), decoders: map[string]func(json.RawMessage) error{}}
	e.register()
	s.AddReceivingMiddleware(e.listOnlyCallable, checkArguments, e.checkKinds)
	return e
}

// privateCache marks every cacheable result (the list methods,
// resources/read, server/discover) for the requesting caller's client
// only, and stale at once: tools/list answers each caller the tools it
// may call, so an intermediary that cached one caller's answer for
// others (the protocol's default scope is public) would show a caller
// tools it may not execute. The HTTP answer says the same
// (Cache-Control: no-store).
func privateCache(_ context.Context, _ sdk.Request, c *sdk.Cacheable) {
	c.CacheScope, c.TTLMs = "private", 0
}

// checkArguments refuses a tools/call whose arguments repeat a key in one
// object or hold a string that is not UTF-8 (jsoncheck.Check, the REST
// bodies' check): decoded, the last key would win and the bytes become
// U+FFFD, so the tool would run with what the caller did not mean. A
// catalogue tool's arguments are named under "arguments", as call_tool's
// are; a gateway tool's are its own fields.
func checkArguments(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil || len(call.Params.Arguments) == 0 {
			return next(ctx, method, req)
		}
		root := "arguments"
		if _, gateway := Rules[call.Params.Name]; gateway {
			root = ""
		}
		if err := jsoncheck.Check(call.Params.Arguments, root); err != nil {
			return errorResult(clientMessage(err)), nil
		}
		return next(ctx, method, req)
	}
}

// checkKinds refuses a gateway tool's tools/call whose arguments its
// input struct cannot hold (decodeArguments): before the SDK's schema check
// and decoding, whose messages would name Go types ("cannot unmarshal …
// into Go struct field …") or say only that a JSON number is not an
// integer. The error names the argument, as the tool calls it.
func (e *Edge) checkKinds(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		if decode, ok := e.decoders[call.Params.Name]; ok {
			if err := decode(call.Params.Arguments); err != nil {
				return errorResult(clientMessage(argError(call.Params.Name, err))), nil
			}
		}
		return next(ctx, method, req)
	}
}

// listOnlyCallable filters tools/list to the tools the caller's rule
// admits: a caller never sees a tool it may not call.
func (e *Edge) listOnlyCallable(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		list, ok := res.(*sdk.ListToolsResult)
		if !ok {
			return res, nil
		}
		h := headerOf(req.GetExtra())
		p, err := e.principal(ctx, h)
		if err != nil {
			return nil, err
		}
		caller, nerr := identity.Narrow(p, h)
		kept := list.Tools[:0:0]
		for _, t := range list.Tools {
			if rule, ok := Rules[t.Name]; ok {
				// The same check as a call: a gateway's narrowed level.
				if nerr == nil && rule.Check(p.Acting(caller)) == nil {
					kept = append(kept, t)
				}
				continue
			}
			if x, ok := e.exposed(t.Name); ok && nerr == nil && caller.Allows(x.rule) {
				kept = append(kept, listed(t, x.id))
			}
		}
		list.Tools = kept
		return list, nil
	}
}

// Server is the SDK server (for stdio and in-memory transports).
func (e *Edge) Server() *sdk.Server { return e.server }

// Handler serves Streamable HTTP (mount it at /mcp).
func (e *Edge) Handler() http.Handler {
	limit := e.d.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	// The SDK's own bound (4 MiB) would refuse bodies the server's flag
	// admits: the flag governs MCP too.
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return e.server },
		&sdk.StreamableHTTPOptions{MaxRequestBodyBytes: limit})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The SDK hands tools the request's headers, not its peer address;
		// the address identifies an anonymous caller's rate-limit bucket.
		// Whatever a client sent under this name is replaced.
		r.Header.Set(headerClientAddr, e.d.Proxies.ClientAddr(r))
		h.ServeHTTP(w, r)
	})
}

// DefaultMaxBodyBytes is the bound on a request body when Deps sets none:
// the default of --max-body-bytes (8 MiB).
const DefaultMaxBodyBytes = 8 << 20

// headerClientAddr carries the peer address from Handler to the tools.
const headerClientAddr = "X-Toolsmith-Client-Addr"

// limit takes a token of the tool's rate limit class (none for a tool
// without one) from the caller's bucket.
func (e *Edge) limit(class string, p identity.Principal, req *sdk.CallToolRequest) error {
	if class == "" {
		return nil
	}
	addr := ""
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		addr = req.Extra.Header.Get(headerClientAddr)
	}
	return e.d.Limiter.Take(class, p, addr)
}

// caller authenticates one call from its request's headers.
func (e *Edge) caller(ctx context.Context, req *sdk.CallToolRequest) (identity.Principal, access.Caller, error) {
	var extra *sdk.RequestExtra
	if req != nil {
		extra = req.Extra
	}
	h := headerOf(extra)
	p, err := e.principal(ctx, h)
	if err != nil {
		return identity.Principal{}, access.Caller{}, err
	}
	c, err := identity.Narrow(p, h)
	return p, c, err
}

// principal authenticates the Authorization header of h (the anonymous
// guest without an authenticator).
func (e *Edge) principal(ctx context.Context, h http.Header) (identity.Principal, error) {
	if e.d.Auth == nil {
		return identity.Anonymous(), nil
	}
	return e.d.Auth.Authenticate(ctx, h.Get("Authorization"))
}

// headerOf is a request's HTTP header (empty over stdio and in memory).
func headerOf(extra *sdk.RequestExtra) http.Header {
	if extra == nil || extra.Header == nil {
		return http.Header{}
	}
	return extra.Header
}

// add registers a typed tool behind the edge's rule check, audit and
// metrics; the handler gets the authenticated caller.
func add[In, Out any](e *Edge, t *sdk.Tool, h func(ctx context.Context, caller access.Caller, in In) (Out, error)) {
	rule, ok := Rules[t.Name]
	e.decoders[t.Name] = func(raw json.RawMessage) error {
		var in In
		return decodeArguments(raw, &in, "")
	}
	for _, target := range []struct {
		field *any
		infer func() (*jsonschema.Schema, error)
	}{{&t.InputSchema, func() (*jsonschema.Schema, error) { return jsonschema.For[In](nil) }},
		{&t.OutputSchema, func() (*jsonschema.Schema, error) { return jsonschema.For[Out](nil) }}} {
		if *target.field == nil {
			if sch, err := target.infer(); err == nil {
				anyAsTypes(sch)
				*target.field = sch
			}
		}
	}
	// The SDK checks the arguments against the schema and hands them over
	// undecoded: decodeArguments reads them into In, so a value In cannot
	// hold (1e20 for an int) is named as the argument it is, not by
	// encoding/json's Go struct and type names.
	sdk.AddTool(e.server, t, func(ctx context.Context, req *sdk.CallToolRequest, raw json.RawMessage) (*sdk.CallToolResult, Out, error) {
		start := time.Now()
		var zero Out
		var in In
		if err := decodeArguments(raw, &in, ""); err != nil {
			return nil, zero, errors.New(clientMessage(argError(t.Name, err)))
		}
		p, caller, err := e.caller(ctx, req)
		if err == nil && !ok {
			err = fmt.Errorf("tool %s has no rule: %w", t.Name, fault.ErrForbidden)
		}
		if err == nil {
			err = rule.Check(p.Acting(caller)) // a gateway's narrowed level is the one authorized
		}
		if err == nil {
			err = e.limit(Limits[t.Name], p, req)
		}
		out := zero
		if err == nil {
			ctx = identity.NewContext(ctx, p, caller)
			out, err = h(ctx, caller, in)
		}
		// The domain names fields as REST does; the planner reads its own
		// arguments' names.
		err = argError(t.Name, err)
		e.record(ctx, p, t.Name, auditTool(in), err, time.Since(start))
		if err != nil {
			// A tool error (isError) the model can read; the server keeps serving.
			return nil, zero, errors.New(clientMessage(err))
		}
		return nil, out, nil
	})
}

// record audits one call and counts it in the metrics.
func (e *Edge) record(ctx context.Context, p identity.Principal, name, toolID string, err error, took time.Duration) {
	outcome := graph.AuditSuccess
	switch {
	case errors.Is(err, fault.ErrUnauthenticated), errors.Is(err, fault.ErrForbidden):
		outcome = graph.AuditDenied
	case err != nil:
		outcome = graph.AuditFailed
	}
	e.d.Metrics.MCPCall(name, outcome, took)
	if e.d.Audit == nil {
		return
	}
	ev := graph.AuditEvent{Actor: p.Subject, ActorName: p.Name, Method: p.Method, Action: "mcp." + name,
		Outcome: outcome, Route: "mcp tools/call " + name, Tool: toolID}
	if err != nil {
		ev.Detail = err.Error()
	}
	// Reads are audited through the batch writer so they do not wait for a
	// store write; executions and refusals are written before the answer.
	if later, ok := e.d.Audit.(laterRecorder); ok && readOnly[name] && outcome == graph.AuditSuccess {
		_ = later.RecordLater(ctx, ev)
		return
	}
	_ = e.d.Audit.Record(ctx, ev)
}

// laterRecorder is an audit log that can batch writes (audit.Log).
type laterRecorder interface {
	RecordLater(ctx context.Context, e graph.AuditEvent) error
}

// readOnly are the tools that change nothing and execute nothing.
var readOnly = map[string]bool{"find_tools": true, "kb.hybrid_search": true, "kb.get_document": true, "kb.stats": true,
	"kb.list_collections": true, "kb.resolve_citations": true, "kb.answer": true}

// principalOf is the call's principal (set by add).
func principalOf(ctx context.Context) identity.Principal {
	p, _, ok := identity.FromContext(ctx)
	if !ok {
		return identity.Anonymous()
	}
	return p
}

// auditTool names the Toolsmith tool a call was about, when it has one.
func auditTool(in any) string {
	switch v := in.(type) {
	case CallToolIn:
		return v.ToolID
	case GetDocumentIn:
		return v.ID
	}
	return ""
}

// clientMessage is the text an MCP client sees for an error: the message
// without the internal sentinel suffixes' noise.
func clientMessage(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, fault.ErrUnauthenticated):
		return "unauthenticated: " + msg
	case errors.Is(err, fault.ErrForbidden):
		return "forbidden: " + msg
	case errors.Is(err, fault.ErrNotFound):
		return "not found: " + msg
	}
	return msg
}

// ---- gateway tools ----

// FindToolsIn is find_tools' input.
type FindToolsIn struct {
	Intent  string `json:"intent" jsonschema:"what you want to do, in words (e.g. convert 100 USD to EUR)"`
	Context string `json:"context,omitempty" jsonschema:"the conversation or task context, to disambiguate"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"how many tools (1-10, default 3)"`
}

// FoundTool is one tool with what a planner needs to call it.
type FoundTool struct {
	ToolID       string         `json:"toolId"`
	Name         string         `json:"name"`
	Verb         string         `json:"verb"`
	Description  string         `json:"description"`
	Score        float64        `json:"score"`
	InputSchema  map[string]any `json:"inputSchema,omitempty"`
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
}

// FindToolsOut is find_tools' output.
type FindToolsOut struct {
	Tools []FoundTool `json:"tools"`
}

// CallToolIn is call_tool's input.
type CallToolIn struct {
	ToolID    string         `json:"toolId" jsonschema:"a toolId from find_tools"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"arguments that fit the tool's inputSchema"`
	DryRun    bool           `json:"dryRun,omitempty" jsonschema:"validate and map the arguments without calling the tool"`
}

// RunOut is the outcome of call_tool and fulfil_verb.
type RunOut struct {
	Status     string `json:"status"`
	Succeeded  bool   `json:"succeeded"`
	Output     any    `json:"output,omitempty"`
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	UIURL      string `json:"uiUrl,omitempty"`
	Error      string `json:"error,omitempty"`
	ErrorType  string `json:"errorType,omitempty"`
}

// FulfilVerbIn is fulfil_verb's input.
type FulfilVerbIn struct {
	Verb        string         `json:"verb" jsonschema:"the capability as UPPER_SNAKE_CASE, e.g. CONVERT_CURRENCY"`
	Description string         `json:"description,omitempty" jsonschema:"what the verb should do"`
	Inputs      map[string]any `json:"inputs,omitempty" jsonschema:"the inputs at hand"`
	Context     string         `json:"context,omitempty" jsonschema:"the task context"`
	DryRun      bool           `json:"dryRun,omitempty" jsonschema:"plan without executing"`
	Threshold   float64        `json:"threshold,omitempty" jsonschema:"similarity a known tool needs to substitute (0-1). Unset: the server's decision rule (a learned confidence that the best candidate is the right tool, from its similarity, leads and agreeing signals; never a tool the inputs cannot fill); set: this similarity alone decides"`
}

func (e *Edge) register() {
	add(e, &sdk.Tool{Name: "find_tools", Title: "Find tools for an intent",
		Description: "Returns the few best tools for an intent, each with its inputSchema, so you can call_tool one of them. " +
			`Example: {"intent": "convert 100 USD to EUR"}.`,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, e.findTools)
	add(e, &sdk.Tool{Name: "call_tool", Title: "Call a tool",
		Description: "Executes a registered tool (through a durable workflow, with your identity, the tool's policies and input/output validation). " +
			`Example: {"toolId": "currency.convert", "arguments": {"amount": 100, "from": "USD", "to": "EUR"}}.`}, e.callTool)
	add(e, &sdk.Tool{Name: "fulfil_verb", Title: "Fulfil a novel verb",
		Description: "Asks Toolsmith to fulfil a capability: it substitutes a confident match, decomposes the verb, or finds and builds a tool. " +
			"Returns the result, or the workflow id and its Temporal UI link when it is not ready in time. " +
			`Example: {"verb": "CONVERT_CURRENCY", "description": "convert money", "inputs": {"amount": 100, "from": "USD", "to": "EUR"}}.`}, e.fulfilVerb)
	e.registerKB()
}

func (e *Edge) findTools(ctx context.Context, caller access.Caller, in FindToolsIn) (FindToolsOut, error) {
	if strings.TrimSpace(in.Intent) == "" {
		return FindToolsOut{}, fault.Invalid("intent", "is required")
	}
	limit, err := limitOf(in.Limit, 3, 10)
	if err != nil {
		return FindToolsOut{}, err
	}
	hits, _, err := e.d.Retrieval.Rank(ctx, retrieval.Query{Text: in.Intent, Context: in.Context, MaxTools: limit, Caller: caller})
	if err != nil {
		return FindToolsOut{}, err
	}
	out := FindToolsOut{Tools: []FoundTool{}}
	for _, h := range hits {
		if len(out.Tools) == limit {
			break
		}
		ft := FoundTool{ToolID: h.Tool.ID, Name: h.Tool.Name, Verb: h.Tool.Verb, Description: h.Tool.ShortDescription, Score: h.Score}
		if mv, err := e.d.Retrieval.Manifest(ctx, h.Tool.ID, caller, retrieval.ManifestOptions{}); err == nil {
			ft.InputSchema, _ = mv.Manifest["inputSchema"].(map[string]any)
			ft.OutputSchema, _ = mv.Manifest["outputSchema"].(map[string]any)
		}
		// A schema nested deeper than registration allows (a tool stored
		// before the bound) would make the whole answer fail the SDK's
		// output check, for every caller whose intent reaches the tool:
		// the tool is left out instead.
		if tool.ValueDeeperThan(ft.InputSchema, tool.MaxJSONDepth) || tool.ValueDeeperThan(ft.OutputSchema, tool.MaxJSONDepth) {
			e.d.Log.Warn("mcp: find_tools leaves out a tool whose schema nests too deeply", "tool", h.Tool.ID, "maxDepth", tool.MaxJSONDepth)
			continue
		}
		out.Tools = append(out.Tools, ft)
	}
	return out, nil
}

// limitOf reads an optional limit argument as REST reads a search's
// maxTools: absent (or null) is def, and a given one must be between 1
// and max, so 0 is refused as 11 is rather than read as the default.
func limitOf(limit *int, def, max int) (int, error) {
	if limit == nil {
		return def, nil
	}
	if *limit < 1 || *limit > max {
		return 0, fault.Invalid("limit", "must be between 1 and %d, got %d", max, *limit)
	}
	return *limit, nil
}

func (e *Edge) callTool(ctx context.Context, caller access.Caller, in CallToolIn) (RunOut, error) {
	if strings.TrimSpace(in.ToolID) == "" {
		return RunOut{}, fault.Invalid("toolId", "is required")
	}
	if e.d.Fulfil == nil {
		return RunOut{}, fmt.Errorf("tool execution is not configured on this server: %w", fault.ErrUnavailable)
	}
	run, r, err := e.d.Fulfil.StartExecute(ctx, caller, in.ToolID, fulfil.ExecuteRequest{Inputs: in.Arguments, DryRun: in.DryRun}, "")
	if err != nil {
		return RunOut{}, err
	}
	return e.wait(ctx, run, r, func(res any) any {
		if x, ok := res.(*executeOutput); ok {
			return x.Output
		}
		return res
	}, new(executeOutput))
}

// executeOutput is the part of workflows.ExecuteToolResult a planner needs.
type executeOutput struct {
	Output any `json:"output"`
}

func (e *Edge) fulfilVerb(ctx context.Context, caller access.Caller, in FulfilVerbIn) (RunOut, error) {
	if e.d.Fulfil == nil {
		return RunOut{}, fmt.Errorf("verb fulfilment is not configured on this server: %w", fault.ErrUnavailable)
	}
	req := fulfil.VerbRequest{Verb: in.Verb, Description: in.Description, Inputs: in.Inputs, Context: in.Context,
		Options: fulfil.VerbOptions{DryRun: in.DryRun, Threshold: in.Threshold}}
	run, r, err := e.d.Fulfil.StartVerb(ctx, caller, req, "")
	if err != nil {
		return RunOut{}, err
	}
	return e.wait(ctx, run, r, func(res any) any { return res }, new(workflows.NovelVerbResult))
}

// wait waits for a run's outcome up to the call timeout. A cancelled call
// (notifications/cancelled) cancels the workflow; a run still going when
// the timeout ends is answered with its id and UI link.
func (e *Edge) wait(ctx context.Context, run client.WorkflowRun, r fulfil.Run, output func(any) any, result any) (RunOut, error) {
	done := e.d.Fulfil.Wait(ctx, run, e.d.CallTimeout, &r, result)
	if !done && ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = e.d.Fulfil.Cancel(cctx, r.WorkflowID, r.RunID)
		return RunOut{}, fmt.Errorf("the call was cancelled; workflow %s was asked to cancel: %w", r.WorkflowID, ctx.Err())
	}
	out := RunOut{Status: r.Status, Succeeded: r.Succeeded, WorkflowID: r.WorkflowID, RunID: r.RunID, UIURL: r.UIURL,
		Error: r.Error, ErrorType: r.ErrorType}
	if r.Result != nil {
		out.Output = output(r.Result)
	}
	if done && !r.Succeeded {
		msg := fmt.Sprintf("%s ended %s", r.WorkflowID, r.Status)
		if r.ErrorType != "" {
			msg += " (" + r.ErrorType + ")"
		}
		if r.Error != "" {
			msg += ": " + r.Error
		}
		return out, errors.New(msg)
	}
	return out, nil
}

// ---- kb.* ----

// SearchIn is kb.hybrid_search's input.
type SearchIn struct {
	Query    string `json:"query" jsonschema:"what to search for"`
	Context  string `json:"context,omitempty" jsonschema:"context that disambiguates the query"`
	Strategy string `json:"strategy,omitempty" jsonschema:"hybrid (default), semantic, keyword, category or session"`
	Category string `json:"category,omitempty" jsonschema:"restrict to a category"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"how many hits (1-20, default 5)"`
}

// SearchHit is a compact hit.
type SearchHit struct {
	ToolID    string             `json:"toolId"`
	Name      string             `json:"name"`
	Verb      string             `json:"verb"`
	Category  string             `json:"category"`
	Score     float64            `json:"score"`
	Breakdown map[string]float64 `json:"breakdown"`
	Entities  []string           `json:"entities,omitempty"`
}

// SearchOut is kb.hybrid_search's output.
type SearchOut struct {
	Hits []SearchHit `json:"hits"`
}

// DocumentSource returns the document a tool came from: the OpenAPI spec
// of an onboarded tool or its module's GET /manifest. kind names it
// ("openapi", "module-manifest").
type DocumentSource interface {
	SourceDocument(ctx context.Context, t graph.Tool, m tool.Manifest) (kind string, body []byte, err error)
}

// GetDocumentIn is kb.get_document's input.
type GetDocumentIn struct {
	ID        string `json:"id" jsonschema:"a tool id"`
	Document  string `json:"document,omitempty" jsonschema:"manifest (default) or source: the OpenAPI spec or module manifest the tool came from"`
	StartLine int    `json:"startLine,omitempty" jsonschema:"first line to return (1-based; default 1)"`
	EndLine   int    `json:"endLine,omitempty" jsonschema:"last line to return (default: the end)"`
	StartByte int    `json:"startByte,omitempty" jsonschema:"with endByte: return bytes [startByte, endByte) instead of lines"`
	EndByte   int    `json:"endByte,omitempty" jsonschema:"end of the byte range (exclusive)"`
}

// DocumentOut is a document or a range of it.
type DocumentOut struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	TotalLines int    `json:"totalLines"`
	StartLine  int    `json:"startLine"`
	EndLine    int    `json:"endLine,omitempty"`
	TotalBytes int    `json:"totalBytes,omitempty"`
	StartByte  int    `json:"startByte,omitempty"`
	EndByte    int    `json:"endByte,omitempty"`
	Text       string `json:"text"`
}

// StatsIn is kb.stats' (empty) input.
type StatsIn struct{}

// StatsOut is kb.stats' output.
type StatsOut struct {
	Stats    graph.Stats        `json:"stats"`
	Embedder graph.EmbedderInfo `json:"embedder"`
	// EmbedderHealthy is false when the store has no embedder recorded.
	EmbedderHealthy bool `json:"embedderHealthy"`
	// CacheHitRate is the share of searches answered from the result
	// cache in this process (0 before any search).
	CacheHitRate float64               `json:"cacheHitRate"`
	Usage        analytics.UsageTotals `json:"usage"`
	MostUsed     []analytics.ToolUsage `json:"mostUsed"`
}

// CollectionsIn is kb.list_collections' input.
type CollectionsIn struct {
	Kind   string `json:"kind,omitempty" jsonschema:"categories, groups, modules or sources (default: all; sources for admins)"`
	Prefix string `json:"prefix,omitempty" jsonschema:"only names starting with this"`
}

// CollectionsOut counts the tools the caller may see per collection.
type CollectionsOut struct {
	Categories map[string]int `json:"categories,omitempty"`
	Groups     map[string]int `json:"groups,omitempty"`
	Modules    map[string]int `json:"modules,omitempty"`
	// Sources are the airlock's spec sources with their spec counts
	// (admins only: sources are an operator's business).
	Sources map[string]int `json:"sources,omitempty"`
}

// CitationsIn is kb.resolve_citations' input.
type CitationsIn struct {
	IDs []string `json:"ids" jsonschema:"tool ids to resolve"`
}

// Citation says where a tool came from.
type Citation struct {
	ID       string `json:"id"`
	Found    bool   `json:"found"`
	Origin   string `json:"origin,omitempty"`
	SpecURL  string `json:"specUrl,omitempty"`
	Provider string `json:"provider,omitempty"`
	Version  string `json:"version,omitempty"`
	License  string `json:"license,omitempty"`
	Module   string `json:"module,omitempty"`
}

// CitationsOut is kb.resolve_citations' output.
type CitationsOut struct {
	Citations []Citation `json:"citations"`
}

// AnswerIn is kb.answer's input.
type AnswerIn struct {
	Question string `json:"question" jsonschema:"a question about the tool catalogue"`
}

// AnswerOut is an answer with the tools it was drawn from.
type AnswerOut struct {
	Answer    string   `json:"answer"`
	Citations []string `json:"citations"`
}

func (e *Edge) registerKB() {
	add(e, &sdk.Tool{Name: "kb.hybrid_search", Title: "Search the tool knowledge graph",
		Description: "Hybrid search (semantic, full-text, graph context, usage) over the tools you may see; compact hits with their score breakdown. " +
			`Example: {"query": "MAKE_RESERVATION", "context": "flight to Denver", "limit": 3}.`,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, e.hybridSearch)
	add(e, &sdk.Tool{Name: "kb.get_document", Title: "Get a tool's manifest",
		Description: "Returns a tool's manifest as JSON text, or with document \"source\" the OpenAPI spec or module manifest it came from; " +
			`optionally a line or byte range. Example: {"id": "currency.convert", "startLine": 1, "endLine": 20}.`,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, e.getDocument)
	add(e, &sdk.Tool{Name: "kb.stats", Title: "Catalogue statistics (admin)",
		Description: "Counts by kind (tools by status, verbs, entities, categories, tags, groups, edges, usage events) and the embedder. Example: {}.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, e.stats)
	add(e, &sdk.Tool{Name: "kb.list_collections", Title: "List categories, groups and modules",
		Description: `Counts the tools you may see per category, group and module. Example: {"kind": "categories", "prefix": "tra"}.`,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, e.listCollections)
	add(e, &sdk.Tool{Name: "kb.resolve_citations", Title: "Where tools came from",
		Description: `For each tool id: its origin, spec URL, provider, version and licence, or its module. Example: {"ids": ["currency.convert"]}.`,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, e.resolveCitations)
	add(e, &sdk.Tool{Name: "kb.answer", Title: "Answer a question about the catalogue",
		Description: "Answers from the tool documents retrieved for the question, with citations, through the configured language model. " +
			`Without one it says so; it never makes an answer up. Example: {"question": "Which tool converts currencies?"}.`,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, e.answer)
}

func (e *Edge) hybridSearch(ctx context.Context, caller access.Caller, in SearchIn) (SearchOut, error) {
	if strings.TrimSpace(in.Query) == "" {
		return SearchOut{}, fault.Invalid("query", "is required")
	}
	limit, err := limitOf(in.Limit, 5, retrieval.MaxTools)
	if err != nil {
		return SearchOut{}, err
	}
	st, err := retrieval.ParseStrategy(in.Strategy)
	if err != nil {
		return SearchOut{}, err // names strategy already
	}
	hits, _, err := e.d.Retrieval.Rank(ctx, retrieval.Query{Text: in.Query, Context: in.Context, Strategy: st, Category: in.Category, MaxTools: limit, Caller: caller})
	if err != nil {
		return SearchOut{}, err
	}
	out := SearchOut{Hits: []SearchHit{}}
	for _, h := range hits[:min(limit, len(hits))] {
		b := h.Breakdown
		out.Hits = append(out.Hits, SearchHit{ToolID: h.Tool.ID, Name: h.Tool.Name, Verb: h.Tool.Verb, Category: h.Tool.Category, Score: h.Score,
			Entities: h.Entities, Breakdown: map[string]float64{
				"semantic": b.Semantic.Weighted, "keyword": b.Keyword.Weighted, "subword": b.Subword.Weighted, "usage": b.Usage.Weighted,
				"neighbours": b.Neighbours.Weighted, "queryLog": b.QueryLog.Weighted, "verb": b.Verb.Weighted, "history": b.History.Weighted,
				"success": b.Success.Weighted, "graph": b.Graph.Weighted, "complexity": b.Complexity.Weighted,
			}})
	}
	return out, nil
}

// visibleTool reads a tool the caller may see (hidden ones are not found).
func (e *Edge) visibleTool(ctx context.Context, caller access.Caller, id string) (graph.Tool, error) {
	t, err := e.d.Store.GetTool(ctx, id)
	return access.VisibleTool(id, t, err, caller)
}

func (e *Edge) getDocument(ctx context.Context, caller access.Caller, in GetDocumentIn) (DocumentOut, error) {
	if strings.TrimSpace(in.ID) == "" {
		return DocumentOut{}, fault.Invalid("id", "is required")
	}
	// A negative position is refused naming it: left to the checks below,
	// startByte -1 without an endByte read as no byte range at all.
	neg := &fault.ValidationError{}
	for _, f := range []struct {
		name string
		v    int
	}{{"startLine", in.StartLine}, {"endLine", in.EndLine}, {"startByte", in.StartByte}, {"endByte", in.EndByte}} {
		if f.v < 0 {
			neg.Add(f.name, "must not be negative, got %d", f.v)
		}
	}
	if err := neg.Err(); err != nil {
		return DocumentOut{}, err
	}
	if in.EndLine > 0 && in.EndLine < in.StartLine {
		return DocumentOut{}, fault.Invalid("endLine", "must be ≥ startLine ≥ 1, got %d..%d", in.StartLine, in.EndLine)
	}
	mv, err := e.d.Retrieval.Manifest(ctx, in.ID, caller, retrieval.ManifestOptions{IncludeExamples: true})
	if err != nil {
		return DocumentOut{}, err
	}
	kind := "manifest"
	var b []byte
	switch in.Document {
	case "", "manifest":
		if b, err = json.MarshalIndent(mv.Manifest, "", "  "); err != nil {
			return DocumentOut{}, err
		}
	case "source":
		if e.d.Sources == nil {
			return DocumentOut{}, fmt.Errorf("this server serves no source documents: %w", fault.ErrNotFound)
		}
		t, err := e.visibleTool(ctx, caller, in.ID)
		if err != nil {
			return DocumentOut{}, err
		}
		var m tool.Manifest
		_ = json.Unmarshal(t.Manifest, &m)
		if kind, b, err = e.d.Sources.SourceDocument(ctx, t, m); err != nil {
			return DocumentOut{}, err
		}
	default:
		return DocumentOut{}, fault.Invalid("document", "must be manifest or source, got %q", in.Document)
	}
	if in.EndByte > 0 || in.StartByte > 0 {
		if in.StartByte < 0 || in.EndByte <= in.StartByte || in.StartByte >= len(b) {
			return DocumentOut{}, fault.Invalid("endByte", "the byte range must satisfy 0 ≤ startByte < endByte and startByte < %d, got %d..%d", len(b), in.StartByte, in.EndByte)
		}
		end := min(in.EndByte, len(b))
		return DocumentOut{ID: in.ID, Kind: kind, TotalBytes: len(b), StartByte: in.StartByte, EndByte: end, Text: string(b[in.StartByte:end])}, nil
	}
	lines := strings.Split(string(b), "\n")
	start, end := max(in.StartLine, 1), in.EndLine
	if end == 0 || end > len(lines) {
		end = len(lines)
	}
	if start > len(lines) {
		return DocumentOut{}, fault.Invalid("startLine", "is past the document's %d lines", len(lines))
	}
	return DocumentOut{ID: in.ID, Kind: kind, TotalLines: len(lines), StartLine: start, EndLine: end, TotalBytes: len(b),
		Text: strings.Join(lines[start-1:end], "\n")}, nil
}

func (e *Edge) stats(ctx context.Context, caller access.Caller, _ StatsIn) (StatsOut, error) {
	st, err := e.d.Store.Stats(ctx)
	if err != nil {
		return StatsOut{}, err
	}
	emb, eerr := e.d.Store.Embedder(ctx)
	// Usage and the most used tools count only what the caller may execute.
	r, err := analytics.Build(ctx, e.d.Store, nil, analytics.Options{Top: 5, Caller: &caller})
	if err != nil {
		return StatsOut{}, err
	}
	out := StatsOut{Stats: st, Embedder: emb, EmbedderHealthy: eerr == nil && emb.Dimension > 0, Usage: r.Usage, MostUsed: r.MostUsed}
	if hits, misses := e.d.Metrics.SearchCacheCounts(); hits+misses > 0 {
		out.CacheHitRate = hits / (hits + misses)
	}
	return out, nil
}

func (e *Edge) listCollections(ctx context.Context, caller access.Caller, in CollectionsIn) (CollectionsOut, error) {
	kinds := map[string]bool{"categories": true, "groups": true, "modules": true, "sources": true}
	if in.Kind != "" {
		if !kinds[in.Kind] {
			return CollectionsOut{}, fault.Invalid("kind", "must be categories, groups, modules or sources, got %q", in.Kind)
		}
		kinds = map[string]bool{in.Kind: true}
	}
	out := CollectionsOut{}
	if kinds["categories"] {
		out.Categories = map[string]int{}
	}
	if kinds["groups"] {
		out.Groups = map[string]int{}
	}
	if kinds["modules"] {
		out.Modules = map[string]int{}
	}
	if kinds["sources"] && identity.RuleAdmin.Check(principalOf(ctx)) == nil {
		srcs, err := e.d.Store.Sources(ctx)
		if err != nil {
			return CollectionsOut{}, err
		}
		out.Sources = map[string]int{}
		for _, src := range srcs {
			if strings.HasPrefix(src.Location, in.Prefix) || strings.HasPrefix(src.ID, in.Prefix) {
				out.Sources[src.Location] = src.Specs
			}
		}
	}
	count := func(m map[string]int, name string) {
		if m != nil && name != "" && strings.HasPrefix(name, in.Prefix) {
			m[name]++
		}
	}
	after := ""
	for {
		page, err := e.d.Store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000, Filter: caller.Filter()})
		if err != nil {
			return CollectionsOut{}, err
		}
		for _, t := range page.Items {
			count(out.Categories, t.Category)
			count(out.Modules, access.ModuleOf(&t)) // a wrapper counts under its namespace, as a module-limited caller sees it
			groups := t.Groups
			if len(groups) == 0 {
				groups = []string{access.DefaultGroup}
			}
			for _, g := range groups {
				count(out.Groups, g)
			}
		}
		if page.Next == "" {
			return out, nil
		}
		after = page.Next
	}
}

func (e *Edge) resolveCitations(ctx context.Context, caller access.Caller, in CitationsIn) (CitationsOut, error) {
	if len(in.IDs) == 0 || len(in.IDs) > 100 {
		return CitationsOut{}, fault.Invalid("ids", "must hold 1 to 100 tool ids, got %d", len(in.IDs))
	}
	out := CitationsOut{Citations: []Citation{}}
	for _, id := range in.IDs {
		c := Citation{ID: id}
		t, err := e.visibleTool(ctx, caller, id)
		if err == nil {
			c.Found, c.Module = true, t.Module
			var m tool.Manifest
			if json.Unmarshal(t.Manifest, &m) == nil && m.Source != nil {
				c.Origin, c.SpecURL, c.Version, c.License = m.Source.Origin, m.Source.SpecURL, m.Source.Version, m.Source.License
				if c.SpecURL != "" {
					c.Provider = hostOf(c.SpecURL)
				}
			}
			if c.Origin == "" && c.Module != "" {
				c.Origin = "module"
			}
		}
		out.Citations = append(out.Citations, c)
	}
	return out, nil
}

func hostOf(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	host, _, _ := strings.Cut(u, "/")
	return host
}

func (e *Edge) answer(ctx context.Context, caller access.Caller, in AnswerIn) (AnswerOut, error) {
	if strings.TrimSpace(in.Question) == "" {
		return AnswerOut{}, fault.Invalid("question", "is required")
	}
	if e.d.LLM == nil {
		return AnswerOut{}, errors.New("no language model is configured on this server (set --llm-provider); kb.answer never makes an answer up. " +
			"Use kb.hybrid_search and kb.get_document to read the catalogue yourself")
	}
	hits, _, err := e.d.Retrieval.Rank(ctx, retrieval.Query{Text: in.Question, MaxTools: 5, Caller: caller})
	if err != nil {
		return AnswerOut{}, err
	}
	if len(hits) == 0 {
		return AnswerOut{}, errors.New("no tool you may see matches the question; nothing to answer from")
	}
	var docs strings.Builder
	var cites []string
	for _, h := range hits {
		cites = append(cites, h.Tool.ID)
		fmt.Fprintf(&docs, "[%s] %s (verb %s, category %s): %s\n", h.Tool.ID, h.Tool.Name, h.Tool.Verb, h.Tool.Category, h.Tool.ShortDescription)
	}
	sort.Strings(cites)
	prompt := "Answer the question using only these tool documents. Cite tool ids in brackets. " +
		"If they do not answer it, say so.\n\nDocuments:\n" + docs.String() + "\nQuestion: " + in.Question
	text, err := llms.GenerateFromSinglePrompt(ctx, e.d.LLM, prompt, llms.WithTemperature(0))
	if err != nil {
		return AnswerOut{}, fmt.Errorf("the language model failed: %w", err)
	}
	return AnswerOut{Answer: strings.TrimSpace(text), Citations: cites}, nil
}

// anyTypes is what a Go "any" field may hold, spelled out: the inferred
// schema of such a field is the boolean schema true, which some clients
// (the TypeScript SDK) refuse inside "properties".
var anyTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// anyAsTypes replaces property schemas that admit anything with their
// explicit list of types, recursively.
func anyAsTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		if p == nil || isAnySchema(p) {
			s.Properties[name] = &jsonschema.Schema{Types: anyTypes}
			continue
		}
		anyAsTypes(p)
	}
	anyAsTypes(s.Items)
	if s.AdditionalProperties != nil && !isAnySchema(s.AdditionalProperties) {
		anyAsTypes(s.AdditionalProperties)
	}
}

func isAnySchema(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && (string(b) == "true" || string(b) == "{}")
}
