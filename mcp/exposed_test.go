package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/tool"
)

// auditEvents keeps what the edge audits.
type auditEvents struct {
	mu  sync.Mutex
	evs []graph.AuditEvent
}

func (a *auditEvents) Record(_ context.Context, e graph.AuditEvent) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.evs = append(a.evs, e)
	return nil
}

// TestExposedCallsKeepTheirNameOutOfMetricsAndActions: a catalogue tool
// called by its MCP name is counted and audited as call_tool, its id in
// the audit event's tool field only (which the audit's readers see
// redacted when they may not execute it). Neither /metrics, which an admin
// or a scraper's key reads, nor an audit event's action or route spells
// the tool's MCP name; a refused call of a tool the caller may not execute
// included.
func TestExposedCallsKeepTheirNameOutOfMetricsAndActions(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	const hidden = "deployer.deploy_app"
	if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: hidden, Verb: "DEPLOY_APP", Name: "Deployer",
		ShortDescription: "Deploys an app", Status: graph.StatusActive, Permissions: []string{"role:developer"}},
		Embedding: []float32{1, 0}, Manifest: json.RawMessage(`{"toolId":"` + hidden + `","inputSchema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
	keys := identity.NewKeyService(st)
	_, secret, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "op", Level: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	rec := &auditEvents{}
	edge := mcp.New(mcp.Deps{Auth: &identity.Authenticator{Keys: keys}, Store: st, Metrics: m, Audit: rec})
	if _, err := edge.LoadCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(edge.Handler())
	defer srv.Close()

	name := tool.FunctionName(hidden)
	h := http.Header{"Authorization": {"Bearer " + secret}}
	// The SDK's own answer to a name it does not serve, and the answer to
	// a tool hidden from the caller, are one error but for the name.
	unknown := callToolError(t, srv.URL, h, "deployer__no_such_tool", map[string]any{})
	got := callToolError(t, srv.URL, h, name, map[string]any{})
	if unknown.Code != jsonrpc.CodeInvalidParams || got.Code != unknown.Code ||
		strings.ReplaceAll(got.Message, name, "NAME") != strings.ReplaceAll(unknown.Message, "deployer__no_such_tool", "NAME") {
		t.Fatalf("an admin without the developer role called %s: %+v; an unknown name: %+v", name, got, unknown)
	}
	// Arguments that are not an object say nothing of the tool either.
	if got := callToolError(t, srv.URL, h, name, []int{1}); got.Code != unknown.Code ||
		got.Message != strings.ReplaceAll(unknown.Message, "deployer__no_such_tool", name) {
		t.Fatalf("%s with arguments that are not an object: %+v", name, got)
	}
	// Nor does a narrowing header the key may not send: the tool is
	// judged as the key sees it.
	bad := http.Header{"Authorization": {"Bearer " + secret}, "X-Tool-Groups": {"travel"}}
	if got := callToolError(t, srv.URL, bad, name, map[string]any{}); got.Code != unknown.Code ||
		got.Message != strings.ReplaceAll(unknown.Message, "deployer__no_such_tool", name) {
		t.Fatalf("%s with a group the key lacks: %+v", name, got)
	}

	ms := httptest.NewServer(m.Handler())
	defer ms.Close()
	resp, err := http.Get(ms.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), name) || strings.Contains(string(body), hidden) {
		t.Errorf("/metrics names the tool:\n%s", grepLines(string(body), "mcp_call"))
	}
	if !strings.Contains(string(body), `toolsmith_mcp_calls_total{outcome="failed",tool="call_tool"} 3`) {
		t.Errorf("the call is not counted as call_tool:\n%s", grepLines(string(body), "mcp_call"))
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.evs) != 3 {
		t.Fatalf("audited %d events, want 1: %+v", len(rec.evs), rec.evs)
	}
	for _, ev := range rec.evs {
		if ev.Action != "mcp.call_tool" || strings.Contains(ev.Route, name) || ev.Tool != hidden {
			t.Errorf("audited %+v; want action mcp.call_tool, the id in tool only", ev)
		}
	}
}

// callToolError calls a tool that must answer a JSON-RPC error, and
// returns that error.
func callToolError(t *testing.T, url string, h http.Header, name string, args any) *jsonrpc.Error {
	t.Helper()
	cs := httpSession(t, url, h)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		t.Fatalf("%s: %+v %v, want a JSON-RPC error", name, res, err)
	}
	return werr
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// openStore opens a fresh SQLite store for a 2-dimensional test embedder,
// closed when the test ends.
func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.EnsureEmbedder(context.Background(), graph.EmbedderInfo{Model: "test", Dimension: 2}); err != nil {
		t.Fatal(err)
	}
	return st
}

// httpSession connects a client to the edge at url over Streamable HTTP,
// sending h with every request. The caller closes it before the test
// server closes (which waits for its connections).
func httpSession(t *testing.T, url string, h http.Header) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "test"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerTransport{h}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}
