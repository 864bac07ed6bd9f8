package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/mcp"
)

// TestMCPCountsAgainstTheRESTLimits: find_tools, call_tool and fulfil_verb
// take from the same per-key buckets as the REST routes of their class, so
// a key's budget is spent whichever door it uses.
func TestMCPCountsAgainstTheRESTLimits(t *testing.T) {
	srv, keys, _ := fullServer(t)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx := context.Background()
	secret := strings.TrimPrefix(identitytest.Bearer(t, keys, identity.NewKey{Level: "user", Groups: []string{"*"},
		Limits: graph.KeyLimits{SearchPerMinute: 2, ExecutePerMinute: 1, VerbsPerMinute: 1}}), "Bearer ")
	cs, err := mcp.Connect(ctx, ts.URL, secret, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			return ""
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	rest := func(method, path, body string) int {
		t.Helper()
		return send(t, ts.Config.Handler, method, path, "Bearer "+secret, body).code
	}

	// search: one REST search and one find_tools spend the budget of 2.
	if code := rest(http.MethodGet, "/api/v1/tools/retrieval/search?q=convert", ""); code != http.StatusOK {
		t.Fatalf("REST search: %d", code)
	}
	if msg := call("find_tools", map[string]any{"intent": "convert money"}); msg != "" {
		t.Fatalf("first find_tools: %s", msg)
	}
	if msg := call("find_tools", map[string]any{"intent": "convert money"}); !strings.Contains(msg, "rate limit of the search class") {
		t.Errorf("find_tools past the key's search limit: %q, want a rate-limit error", msg)
	}
	if code := rest(http.MethodGet, "/api/v1/tools/retrieval/search?q=convert", ""); code != http.StatusTooManyRequests {
		t.Errorf("REST search after MCP spent the budget: %d, want 429", code)
	}

	// execute and verbs: the MCP call spends the single token (the unknown
	// tool and the malformed verb stop before Temporal), then REST is
	// refused with 429.
	if msg := call("call_tool", map[string]any{"toolId": "x.y"}); strings.Contains(msg, "rate limit") {
		t.Fatalf("first call_tool: %s", msg)
	}
	if msg := call("call_tool", map[string]any{"toolId": "x.y"}); !strings.Contains(msg, "rate limit of the execute class") {
		t.Errorf("call_tool past the key's execute limit: %q", msg)
	}
	if code := rest(http.MethodPost, "/api/v1/tools/x.y/execute", `{"inputs":{}}`); code != http.StatusTooManyRequests {
		t.Errorf("REST execute after MCP spent the budget: %d, want 429", code)
	}
	if msg := call("fulfil_verb", map[string]any{"verb": "not a verb"}); msg == "" || strings.Contains(msg, "rate limit") {
		t.Fatalf("first fulfil_verb: %s", msg)
	}
	if code := rest(http.MethodPost, "/api/v1/verbs", `{"verb":"DO_IT"}`); code != http.StatusTooManyRequests {
		t.Errorf("REST verbs after MCP spent the budget: %d, want 429", code)
	}
}
