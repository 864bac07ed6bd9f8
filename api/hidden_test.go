package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/mcp"
)

// TestHiddenAndUnknownAnswerAlike: for a caller who may not see a tool,
// execute, the manifest, call_tool and kb.get_document answer exactly as
// for a tool id that does not exist (docs/api.md, status codes: indistinguishable on purpose),
// down to the message, so probing ids reveals nothing.
func TestHiddenAndUnknownAnswerAlike(t *testing.T) {
	srv, keys, st := fullServer(t)
	ctx := context.Background()
	emb := hashing.New(64)
	const hidden, unknown = "secret.tool", "absent.tool" // same length: the messages name the id
	for id, groups := range map[string][]string{hidden: {"secret"}, "deprecated.x": {"default"}} {
		man, _ := json.Marshal(map[string]any{"toolId": id, "verb": "DO_THING", "name": id, "description": "does a thing",
			"inputSchema": map[string]any{"type": "object"}})
		status := graph.StatusActive
		if id == "deprecated.x" {
			status = graph.StatusDeprecated
		}
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO_THING", Name: id, ShortDescription: "does a thing",
			Category: "misc", Status: status, Groups: groups}, Description: "does a thing", Embedding: emb.Vector(id), Manifest: man}); err != nil {
			t.Fatal(err)
		}
	}
	bearer := identitytest.Bearer(t, keys, identity.NewKey{Level: "user", Groups: []string{"default"}})
	h := srv.Handler()
	norm := func(s, id string) string { return strings.ReplaceAll(s, id, "ID") }
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/v1/tools/%s/execute", `{"inputs":{}}`},
		{http.MethodGet, "/api/v1/tools/retrieval/manifest/%s", ""},
		{http.MethodGet, "/api/v1/tools/%s", ""},
	} {
		a := send(t, h, c.method, strings.Replace(c.path, "%s", hidden, 1), bearer, c.body)
		b := send(t, h, c.method, strings.Replace(c.path, "%s", unknown, 1), bearer, c.body)
		if a.code != b.code || norm(a.raw, hidden) != norm(b.raw, unknown) {
			t.Errorf("%s %s: hidden %d %s, unknown %d %s", c.method, c.path, a.code, a.raw, b.code, b.raw)
		}
		d := send(t, h, c.method, strings.Replace(c.path, "%s", "deprecated.x", 1), bearer, c.body)
		if c.method == http.MethodPost && d.code != b.code {
			t.Errorf("%s %s: deprecated %d %s, unknown %d", c.method, c.path, d.code, d.raw, b.code)
		}
	}

	ts := httptest.NewServer(h)
	defer ts.Close()
	cs, err := mcp.Connect(ctx, ts.URL, strings.TrimPrefix(bearer, "Bearer "), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	text := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if !res.IsError {
			t.Errorf("%s %v succeeded: %s", name, args, b.String())
		}
		return b.String()
	}
	for _, c := range []struct {
		tool, field string
		extra       map[string]any
	}{{"call_tool", "toolId", nil}, {"kb.get_document", "id", nil}, {"kb.get_document", "id", map[string]any{"document": "source"}}} {
		args := func(id string) map[string]any {
			m := map[string]any{c.field: id}
			for k, v := range c.extra {
				m[k] = v
			}
			return m
		}
		a, b := text(c.tool, args(hidden)), text(c.tool, args(unknown))
		if norm(a, hidden) != norm(b, unknown) {
			t.Errorf("%s %v: hidden %q, unknown %q", c.tool, c.extra, a, b)
		}
	}
}
