package api_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/mcp"
)

// An MCP tool error names the tool's own argument, never the REST field
// the domain checked it as, and names it once.
func TestMCPErrorsNameTheToolsArguments(t *testing.T) {
	srv, keys, _ := fullServer(t)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx := context.Background()
	secret := strings.TrimPrefix(identitytest.Bearer(t, keys, identity.NewKey{Level: "user", Groups: []string{"*"}}), "Bearer ")
	cs, err := mcp.Connect(ctx, ts.URL, secret, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		tool      string
		args      map[string]any
		want, not string
	}{
		{"find_tools", map[string]any{"intent": strings.Repeat("a ", 5000)}, "intent: must be at most", "q:"},
		{"kb.hybrid_search", map[string]any{"query": strings.Repeat("a ", 5000)}, "query: must be at most", "q:"},
		{"kb.hybrid_search", map[string]any{"query": "convert", "strategy": "bogus"}, "strategy: must be one of", "strategy: strategy"},
		{"fulfil_verb", map[string]any{"verb": "DO_IT", "threshold": 7}, "threshold: must be between 0 and 1", "options."},
		{"find_tools", map[string]any{"intent": "convert\x00money"}, "intent: must not contain control characters", "q:"},
		{"find_tools", map[string]any{"intent": "convert", "context": "a\x1b[31m"}, "context: must not contain control characters", "q:"},
		{"kb.hybrid_search", map[string]any{"query": "convert\x1bmoney"}, "query: must not contain control characters", "q:"},
		// 0 is refused as REST refuses maxTools=0, not read as the default.
		{"find_tools", map[string]any{"intent": "convert", "limit": 0}, "limit: must be between 1 and 10, got 0", "maxTools"},
		{"find_tools", map[string]any{"intent": "convert", "limit": 50}, "limit: must be between 1 and 10, got 50", "maxTools"},
		{"kb.hybrid_search", map[string]any{"query": "convert", "limit": 0}, "limit: must be between 1 and 20, got 0", "maxTools"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		var b strings.Builder
		for _, ct := range res.Content {
			if tc, ok := ct.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		msg := b.String()
		if !res.IsError || !strings.HasPrefix(msg, c.want) || strings.Contains(msg, c.not) {
			t.Errorf("%s %v: %q, want a tool error starting %q without %q", c.tool, c.args, msg, c.want, c.not)
		}
	}
}
