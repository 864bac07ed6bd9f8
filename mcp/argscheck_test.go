package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/metrics"
)

// TestCallArgumentsRepeatingAKeyAreRefused: tools/call arguments that give
// a key twice in one object, or a string that is not UTF-8, are a tool
// error naming the argument before any tool runs, as REST bodies are;
// decoded, the last key would win silently.
func TestCallArgumentsRepeatingAKeyAreRefused(t *testing.T) {
	ctx := context.Background()
	cs := inMemorySession(t, mcp.New(mcp.Deps{Metrics: metrics.New()}))
	call := func(name, args string) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			return err.Error()
		}
		return resultText(res)
	}
	for _, tc := range []struct{ name, args, want string }{
		{"call_tool", `{"toolId":"currency.convert","arguments":{"amount":1,"amount":500}}`, "arguments.amount: is given more than once"},
		{"fulfil_verb", `{"verb":"A_B","verb":"C_D"}`, "verb: is given more than once"},
		{"currency__convert", `{"amount":1,"to":"EUR","amount":500}`, "arguments.amount: is given more than once"},
		{"find_tools", "{\"intent\":\"convert \xff money\"}", "intent: is not UTF-8"},
	} {
		if got := call(tc.name, tc.args); !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
	// Without a repeat the call goes on to its own checks.
	if got := call("call_tool", `{"toolId":"currency.convert","arguments":{"amount":1}}`); strings.Contains(got, "more than once") {
		t.Errorf("a clean call: %q", got)
	}
}

// TestGetDocumentRefusesNegativePositions: kb.get_document names a
// negative startByte (which was read as no byte range at all), and every
// sibling position, instead of answering another part of the document.
func TestGetDocumentRefusesNegativePositions(t *testing.T) {
	ctx := context.Background()
	cs := inMemorySession(t, mcp.New(mcp.Deps{Metrics: metrics.New()}))
	for _, field := range []string{"startByte", "endByte", "startLine", "endLine"} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "kb.get_document", Arguments: map[string]any{"id": "currency.convert", field: -1}})
		if err != nil {
			t.Fatal(err)
		}
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, field+": must not be negative") {
			t.Errorf("%s -1: %v %q, want an error naming %s", field, res.IsError, text, field)
		}
	}
}

// inMemorySession connects a client to edge over in-memory transports,
// both closed when the test ends.
func inMemorySession(t *testing.T, edge *mcp.Edge) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := edge.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "in-memory-test", Version: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// resultText is a tool result's text content.
func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
