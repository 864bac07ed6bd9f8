package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/mcp"
)

// callTool calls one tool of the edge at url as a client sending h and
// returns the result's text (or the tool error's).
func callTool(t *testing.T, url string, h http.Header, name string, args any) (string, bool) {
	t.Helper()
	cs := httpSession(t, url, h)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return resultText(res), res.IsError
}

// kb.stats' most used tools name only tools the caller may execute: an
// admin without the developer role does not see the developer's tool.
func TestStatsNameOnlyToolsTheCallerMayExecute(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	for id, perms := range map[string][]string{"deployer.deploy_app": {"role:developer"}, "currency.convert": {"public"}} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO", Name: id, Status: graph.StatusActive,
			Permissions: perms}, Embedding: []float32{1, 0}, Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "deployer.deploy_app", Success: true}, {ToolID: "currency.convert", Success: true}}); err != nil {
		t.Fatal(err)
	}
	keys := identity.NewKeyService(st)
	srv := httptest.NewServer(mcp.New(mcp.Deps{Auth: &identity.Authenticator{Keys: keys}, Store: st}).Handler())
	defer srv.Close()
	for _, level := range []string{"admin", "owner"} {
		_, secret, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "op-" + level, Level: level})
		if err != nil {
			t.Fatal(err)
		}
		text, isErr := callTool(t, srv.URL, http.Header{"Authorization": {"Bearer " + secret}}, "kb.stats", map[string]any{})
		if isErr || !strings.Contains(text, "currency.convert") {
			t.Fatalf("%s: %v %s", level, isErr, text)
		}
		if strings.Contains(text, "deployer.deploy_app") != (level == "owner") {
			t.Errorf("%s: kb.stats %s", level, text)
		}
	}
}
