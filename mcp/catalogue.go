package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
type catalogue struct {
	mu     sync.RWMutex
	byName map[string]graph.ToolSummary // MCP name -> the tool's summary
	names  map[string]string            // tool id -> MCP name
}

// LoadCatalogue exposes every active tool of the store. Call it once at
// start; ToolChanged keeps it current.
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
			if err := e.ToolChanged(ctx, id); err != nil {
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
	var m tool.Manifest
	if err := json.Unmarshal(t.Manifest, &m); err != nil {
		e.withdraw(id)
		return nil // a tool without a readable manifest cannot be called anyway
	}
	// The schema stays raw JSON (a decoded map costs several times its
	// size, and 10,000 tools are held at once).
	input := json.RawMessage(`{"type":"object","properties":{}}`)
	var probe struct {
		Type string `json:"type"`
	}
	if len(m.InputSchema) > 0 && json.Unmarshal(m.InputSchema, &probe) == nil && probe.Type == "object" {
		input = m.InputSchema
	}
	name := tool.FunctionName(id)
	desc := t.ShortDescription // kb.get_document has the rest
	if desc == "" {
		desc = t.Description
	}
	mt := &sdk.Tool{Name: name, Title: t.Name, Description: desc + " (Toolsmith tool " + id + "; runs through call_tool.)",
		InputSchema: input}
	if m.Version != "" {
		mt.Meta = sdk.Meta{"toolsmith/version": m.Version}
	}
	e.cat.mu.Lock()
	if old, ok := e.cat.names[id]; ok && old != name {
		delete(e.cat.byName, old)
	}
	// Keep only what the visibility rule reads (access.Caller.Reason).
	e.cat.byName[name] = graph.ToolSummary{ID: id, Status: t.Status, Groups: t.Groups, AvailableInStates: t.AvailableInStates,
		Permissions: t.Permissions, RequiredLevel: t.RequiredLevel, Module: t.Module}
	e.cat.names[id] = name
	e.cat.mu.Unlock()
	e.server.AddTool(mt, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return errorResult("arguments: must be a JSON object: " + err.Error()), nil
			}
		}
		start := time.Now()
		p, caller, err := e.caller(ctx, req)
		if err == nil {
			err = e.limit(ratelimit.Execute, p, req)
		}
		if err != nil {
			e.record(ctx, p, name, id, err, time.Since(start))
			return errorResult(clientMessage(err)), nil
		}
		ctx = identity.NewContext(ctx, p, caller)
		if _, err := e.visibleTool(ctx, caller, id); err != nil {
			// Not listed for this caller, so not there: as for an unknown name.
			e.record(ctx, p, name, id, err, time.Since(start))
			return errorResult("not found: unknown tool " + name), nil
		}
		out, err := e.callTool(ctx, caller, CallToolIn{ToolID: id, Arguments: args})
		e.record(ctx, p, name, id, err, time.Since(start))
		if err != nil {
			return errorResult(clientMessage(err)), nil
		}
		b, _ := json.Marshal(out)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: out}, nil
	})
	return nil
}

func (e *Edge) withdraw(id string) {
	e.cat.mu.Lock()
	name, ok := e.cat.names[id]
	if ok {
		delete(e.cat.names, id)
		delete(e.cat.byName, name)
	}
	e.cat.mu.Unlock()
	if ok {
		e.server.RemoveTools(name)
	}
}

// exposed returns the summary of a catalogue tool by its MCP name.
func (e *Edge) exposed(name string) (graph.ToolSummary, bool) {
	e.cat.mu.RLock()
	defer e.cat.mu.RUnlock()
	s, ok := e.cat.byName[name]
	return s, ok
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}
