package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
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

// TestArgumentsOfTheWrongKindNameTheArgument: an argument its tool cannot
// hold (1e20 for an integer, a string for a number, arguments that are no
// object) is a tool error naming the argument in JSON's words, for every
// tool; encoding/json's message, with the Go struct and type it decoded
// into, never reaches the caller.
func TestArgumentsOfTheWrongKindNameTheArgument(t *testing.T) {
	ctx := context.Background()
	cs := inMemorySession(t, mcp.New(mcp.Deps{Metrics: metrics.New()}))
	for _, tc := range []struct{ name, args, want string }{
		{"kb.get_document", `{"id":"currency.convert","startByte":1e20}`, "startByte: must be an integer between -9223372036854775808 and 9223372036854775807, got JSON number"},
		{"kb.get_document", `{"id":"currency.convert","endLine":2.5}`, "endLine: must be an integer between"},
		{"find_tools", `{"intent":"convert","limit":1e300}`, "limit: must be an integer between"},
		{"kb.hybrid_search", `{"query":"convert","limit":-1e19}`, "limit: must be an integer between"},
		{"fulfil_verb", `{"verb":"CONVERT_CURRENCY","threshold":1e400}`, "threshold: must be a number"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.name, Arguments: json.RawMessage(tc.args)})
		var text string
		if err != nil {
			text = err.Error()
		} else {
			text = resultText(res)
		}
		if err == nil && !res.IsError {
			t.Errorf("%s %s: no error, want %q", tc.name, tc.args, tc.want)
			continue
		}
		if !strings.Contains(text, tc.want) || strings.Contains(text, "Go ") || strings.Contains(text, "mcp.") || strings.Contains(text, "json:") {
			t.Errorf("%s %s: %q, want %q without Go names", tc.name, tc.args, text, tc.want)
		}
	}
}

// noRuns is a Temporal client no call may reach: every check under test
// answers before a run starts.
type noRuns struct{ t *testing.T }

func (n noRuns) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	n.t.Error("a run started")
	return nil, errors.New("no runs")
}
func (n noRuns) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	n.t.Error("a run was read")
	return nil
}
func (n noRuns) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, errors.New("no runs")
}
func (n noRuns) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	return nil, errors.New("no runs")
}

// TestCatalogueToolErrorsNameTheArgument: a catalogue tool called by its
// MCP name names a bad argument as call_tool does ("arguments", or the
// argument itself), never by the REST field its execution checks it as
// ("inputs"), nor by encoding/json's Go type names.
func TestCatalogueToolErrorsNameTheArgument(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	emb := hashing.New(64)
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
		t.Fatal(err)
	}
	manifest := `{"toolId":"currency.convert","verb":"CONVERT_CURRENCY","name":"Currency converter",
		"description":"Converts an amount of money from one currency to another.","category":"finance","module":"currency",
		"inputSchema":{"type":"object","required":["amount","from","to"],"properties":{"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}}}}`
	if _, err := registry.New(st, emb).Register(ctx, registry.Request{Manifest: json.RawMessage(manifest)}); err != nil {
		t.Fatal(err)
	}
	edge := mcp.New(mcp.Deps{Retrieval: retrieval.New(st, emb, retrieval.Options{}), Store: st, Metrics: metrics.New(),
		Fulfil: fulfil.New(noRuns{t}, st, fulfil.Config{})})
	if _, err := edge.LoadCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	cs := inMemorySession(t, edge)
	for _, tc := range []struct{ args, want string }{
		{`{"amount":1,"Amount":2,"from":"USD","to":"EUR"}`, `amount: ambiguous: amount, Amount all match parameter "amount"`},
		{`{"from":"USD","to":"EUR"}`, "amount: required by the tool's inputSchema but not provided"},
		{`[1,2]`, "arguments: must be a JSON object, got JSON array"},
		{`{"amount":1e400,"from":"USD","to":"EUR"}`, "arguments.amount: must be a number, got JSON number 1e400"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "currency__convert", Arguments: json.RawMessage(tc.args)})
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, tc.want) || strings.Contains(text, "inputs") || strings.Contains(text, "Go ") {
			t.Errorf("currency__convert %s: %v %q, want a tool error with %q that never says inputs", tc.args, res.IsError, text, tc.want)
		}
	}
}
