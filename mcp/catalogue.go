package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unique"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/ratelimit"
	"github.com/toolsmith/toolsmith/tool"
)

// catalogue is the dynamic part of the MCP registry: every active
// Toolsmith tool as an MCP tool of its own (named tool.FunctionName(id),
// version and capabilities in its _meta), beside the gateway tools. It
// follows the registry without a restart: ToolChanged adds, replaces or
// removes one tool, and the SDK then sends notifications/tools/list_changed
// to the connected sessions. tools/list shows each caller only the tools
// it may execute.
//
// A catalogue of 100,000 tools is held at once, so each tool is kept
// compact: its SDK entry holds the short description (tools/list adds the
// Toolsmith suffix to the page it answers, listOnlyCallable), an input
// schema interned by content (a tool's versions and regional copies share
// one), a _meta shared by the tools of one version, and one handler for
// all; the visibility rule kept beside it is shared by the tools with the
// same one.
type catalogue struct {
	mu     sync.RWMutex
	byName map[string]exposure // MCP name -> the tool it exposes
	// rules and metas intern the visibility rules and the _meta maps (few
	// distinct ones, read-only once made); each stops growing at
	// maxInterned and new values are then kept per tool.
	rules map[string]*graph.ToolSummary
	metas map[string]sdk.Meta
}

// exposure is one exposed tool: its id and its visibility rule (only the
// fields access.Caller.Reason reads; shared, never modified).
type exposure struct {
	id   string
	rule *graph.ToolSummary
}

// maxInterned bounds each intern map of the catalogue.
const maxInterned = 4096

func newCatalogue() catalogue {
	return catalogue{byName: map[string]exposure{}, rules: map[string]*graph.ToolSummary{}, metas: map[string]sdk.Meta{}}
}

// schemaJSON is an input schema's JSON, interned: tools with the same
// schema hold one copy, which the garbage collector frees with the last.
type schemaJSON struct{ h unique.Handle[string] }

// MarshalJSON returns the schema as it was registered (compacted).
func (s schemaJSON) MarshalJSON() ([]byte, error) { return []byte(s.h.Value()), nil }

// emptySchema is the input schema of a tool without an object schema.
var emptySchema = schemaJSON{unique.Make(`{"type":"object","properties":{}}`)}

// LoadCatalogue exposes every active tool of the store. Call it once at
// start; ToolChanged keeps it current. A stored tool that cannot be exposed
// (see ToolChanged) is skipped with a warning and not counted: one bad
// record must not keep the others, or the server, from starting.
func (e *Edge) LoadCatalogue(ctx context.Context) (int, error) {
	after, n := "", 0
	for {
		page, err := e.d.Store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000})
		if err != nil {
			return n, fmt.Errorf("mcp: load the catalogue: %w", err)
		}
		ids := make([]string, 0, len(page.Items))
		for _, s := range page.Items {
			ids = append(ids, s.ID)
		}
		for _, id := range ids {
			err := e.ToolChanged(ctx, id)
			switch {
			case errors.Is(err, ErrNotExposed):
				continue // ToolChanged warned
			case err != nil:
				return n, err
			}
			n++
		}
		if page.Next == "" {
			return n, nil
		}
		after = page.Next
	}
}

// ToolChanged re-reads one tool after the registry changed it: an active
// tool is (re)exposed, any other status or a deleted tool is withdrawn.
// An active tool the catalogue cannot expose (an input schema nested
// deeper than registration allows, stored before that bound, or one the
// SDK refuses) is withdrawn with a logged warning and ErrNotExposed.
func (e *Edge) ToolChanged(ctx context.Context, id string) error {
	t, err := e.d.Store.GetTool(ctx, id)
	switch {
	case errors.Is(err, fault.ErrNotFound):
		e.withdraw(id)
		return nil
	case err != nil:
		return fmt.Errorf("mcp: tool %q changed: %w", id, err)
	case t.Status != graph.StatusActive:
		e.withdraw(id)
		return nil
	}
	var m struct {
		Version     string          `json:"version"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(t.Manifest, &m); err != nil {
		e.withdraw(id)
		return nil // a tool without a readable manifest cannot be called anyway
	}
	input := emptySchema
	var probe struct {
		Type string `json:"type"`
	}
	if tool.DeeperThan(m.InputSchema, tool.MaxJSONDepth) {
		e.withdraw(id)
		e.d.Log.Warn("mcp: catalogue skips a tool whose input schema nests too deeply", "tool", id, "maxDepth", tool.MaxJSONDepth)
		return fmt.Errorf("mcp: tool %q: input schema nests deeper than %d: %w", id, tool.MaxJSONDepth, ErrNotExposed)
	}
	if len(m.InputSchema) > 0 && json.Unmarshal(m.InputSchema, &probe) == nil && probe.Type == "object" {
		var b bytes.Buffer
		if json.Compact(&b, m.InputSchema) == nil {
			input = schemaJSON{unique.Make(b.String())}
		}
	}
	name := tool.FunctionName(id)
	desc := t.ShortDescription // kb.get_document has the rest
	if desc == "" {
		desc = t.Description
	}
	mt := &sdk.Tool{Name: name, Title: t.Name, Description: desc, InputSchema: input}
	e.cat.mu.Lock()
	if m.Version != "" {
		mt.Meta = e.cat.meta(m.Version)
	}
	e.cat.byName[name] = exposure{id: id, rule: e.cat.rule(t.ToolSummary)}
	e.cat.mu.Unlock()
	if err := e.addTool(mt); err != nil {
		e.withdraw(id)
		e.d.Log.Warn("mcp: catalogue skips a tool the MCP server refuses", "tool", id, "err", err)
		return fmt.Errorf("mcp: tool %q: %w: %w", id, ErrNotExposed, err)
	}
	return nil
}

// ErrNotExposed is a stored active tool the catalogue cannot expose.
var ErrNotExposed = errors.New("tool not exposed over MCP")

// addTool adds a catalogue tool to the SDK server, which panics on a tool
// it cannot take (a schema it cannot marshal): the panic becomes an error,
// so that one stored record can neither fail the registry write that
// announced it nor stop the server from starting.
func (e *Edge) addTool(mt *sdk.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	e.server.AddTool(mt, e.callExposed)
	return nil
}

// meta returns the shared _meta of a version; the caller holds c.mu.
func (c *catalogue) meta(version string) sdk.Meta {
	if m, ok := c.metas[version]; ok {
		return m
	}
	m := sdk.Meta{"toolsmith/version": version}
	if len(c.metas) < maxInterned {
		c.metas[version] = m
	}
	return m
}

// rule returns the shared visibility rule of a tool; the caller holds c.mu.
// The rule has no id, so it carries the tool's module as access.ModuleOf
// resolves it: a wrapper that names no module keeps its namespace, and a
// caller limited to that namespace sees it listed.
func (c *catalogue) rule(t graph.ToolSummary) *graph.ToolSummary {
	module := access.ModuleOf(&t)
	key := strings.Join([]string{strings.Join(t.Groups, "\x1f"), strings.Join(t.AvailableInStates, "\x1f"),
		strings.Join(t.Permissions, "\x1f"), t.RequiredLevel, module}, "\x1e")
	if r, ok := c.rules[key]; ok {
		return r
	}
	r := &graph.ToolSummary{Status: graph.StatusActive, Groups: t.Groups, AvailableInStates: t.AvailableInStates,
		Permissions: t.Permissions, RequiredLevel: t.RequiredLevel, Module: module}
	if len(c.rules) < maxInterned {
		c.rules[key] = r
	}
	return r
}

// callExposed runs a catalogue tool, called by its MCP name, like call_tool.
// It is audited and counted as call_tool, with the tool's id in the audit
// event: the audit's action and route and the metrics' labels are read by
// operators who may not execute every tool, so they do not carry a tool's
// MCP name (its id spelled otherwise), and the metrics keep a fixed set of
// label values however large the catalogue grows.
func (e *Edge) callExposed(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	name := req.Params.Name
	x, ok := e.exposed(name)
	if !ok {
		return nil, unknownTool(name)
	}
	id := x.id
	start := time.Now()
	p, caller, err := e.caller(ctx, req)
	if err != nil {
		// A credential or a narrowing header this call cannot use: the
		// tool is judged as the principal (or, unauthenticated, the guest)
		// sees it, so a tool hidden from it answers as an unknown name,
		// not with the credential's problem.
		seer := identity.Anonymous()
		if p.Authenticated() {
			seer = p
		}
		if _, verr := e.visibleTool(ctx, seer.Caller(), id); verr != nil {
			e.record(ctx, p, "call_tool", id, verr, time.Since(start))
			return nil, unknownTool(name)
		}
		e.record(ctx, p, "call_tool", id, err, time.Since(start))
		return errorResult(clientMessage(err)), nil
	}
	ctx = identity.NewContext(ctx, p, caller)
	if _, err := e.visibleTool(ctx, caller, id); err != nil {
		// Not listed for this caller, so not there: the SDK's own answer
		// to a name it does not serve, before the rate limit or the
		// arguments are read (an unknown name reaches neither), so
		// nothing tells a hidden tool from a name no tool has.
		e.record(ctx, p, "call_tool", id, err, time.Since(start))
		return nil, unknownTool(name)
	}
	if err := e.limit(ratelimit.Execute, p, req); err != nil {
		e.record(ctx, p, "call_tool", id, err, time.Since(start))
		return errorResult(clientMessage(err)), nil
	}
	var args map[string]any
	if err := decodeArguments(req.Params.Arguments, &args, "arguments"); err != nil {
		return errorResult(clientMessage(err)), nil
	}
	out, err := e.callTool(ctx, caller, CallToolIn{ToolID: id, Arguments: args})
	e.record(ctx, p, "call_tool", id, err, time.Since(start))
	if err != nil {
		// The tool's arguments are named as call_tool's are
		// ("arguments.amount"), never by the REST field ("inputs").
		return errorResult(clientMessage(argError("call_tool", err))), nil
	}
	b, _ := json.Marshal(out)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: out}, nil
}

// unknownTool is the SDK's answer to tools/call of a name it does not
// serve (go-sdk's Server.callTool): JSON-RPC invalid params, "unknown
// tool" and the quoted name. A catalogue tool the caller may not execute
// answers with it too, so the two cannot be told apart.
func unknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

func (e *Edge) withdraw(id string) {
	name := tool.FunctionName(id)
	e.cat.mu.Lock()
	x, ok := e.cat.byName[name]
	ok = ok && x.id == id
	if ok {
		delete(e.cat.byName, name)
	}
	e.cat.mu.Unlock()
	if ok {
		e.server.RemoveTools(name)
	}
}

// exposed returns the catalogue tool of an MCP name.
func (e *Edge) exposed(name string) (exposure, bool) {
	e.cat.mu.RLock()
	defer e.cat.mu.RUnlock()
	x, ok := e.cat.byName[name]
	return x, ok
}

// listed is a catalogue tool as tools/list shows it: its description with
// the Toolsmith suffix. The SDK's entry is shared, so it is copied.
func listed(t *sdk.Tool, id string) *sdk.Tool {
	c := *t
	c.Description = t.Description + " (Toolsmith tool " + id + "; runs through call_tool.)"
	return &c
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}
