package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/registry"
)

// serveMCP serves the env's API with the MCP edge at /mcp.
func (e *env) serveMCP(timeout time.Duration) *metrics.Metrics {
	v := verbs.New(e.client, e.store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace(), UIBaseURL: "http://ui.invalid"})
	m := metrics.New()
	edge := mcp.New(mcp.Deps{Auth: &identity.Authenticator{Keys: e.keys}, Retrieval: e.search, Store: e.store, Fulfil: v.Service(),
		Audit: audit.New(e.store), Metrics: m, Version: "e2e", CallTimeout: timeout})
	e.mu.Lock()
	e.hooks = append(e.hooks, func(id string) { _ = edge.ToolChanged(context.Background(), id) })
	e.mu.Unlock()
	if _, err := edge.LoadCatalogue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.handlers = []api.Handler{{Methods: []string{http.MethodGet, http.MethodPost, http.MethodDelete}, Path: "/mcp", Handler: edge.Handler()}}
	e.serve(v)
	return m
}

// mcpSession connects the SDK's own client to the env's /mcp with key.
func (e *env) mcpSession(t testing.TB, key string) *sdk.ClientSession {
	t.Helper()
	cs, err := mcp.Connect(context.Background(), e.api.URL, key, "e2e")
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and returns its result, its structured content and its text.
func call(t *testing.T, cs *sdk.ClientSession, name string, args any) (*sdk.CallToolResult, map[string]any, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	var structured map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &structured)
	}
	return res, structured, strings.Join(text, "\n")
}

func TestMCPOverStreamableHTTP(t *testing.T) {
	e := newEnv(t)
	m := e.serveMCP(30 * time.Second)
	cs := e.mcpSession(t, e.admin)

	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.InputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s lacks a schema or description", tool.Name)
		}
		names = append(names, tool.Name)
	}
	for name := range mcp.Rules {
		if !slices.Contains(names, name) {
			t.Errorf("tools/list lacks %s (listed: %v)", name, names)
		}
	}
	if !slices.Contains(names, "currency__convert") {
		t.Errorf("the catalogue's tools are not listed: %v", names)
	}

	// find_tools → call_tool, the planner's walk.
	res, out, text := call(t, cs, "find_tools", map[string]any{"intent": "convert 100 US dollars to euros", "limit": 3})
	if res.IsError {
		t.Fatalf("find_tools: %s", text)
	}
	tools, _ := out["tools"].([]any)
	if len(tools) == 0 || tools[0].(map[string]any)["toolId"] != "currency.convert" || tools[0].(map[string]any)["inputSchema"] == nil {
		t.Fatalf("find_tools: %v", out)
	}
	res, out, text = call(t, cs, "call_tool", map[string]any{"toolId": "currency.convert", "arguments": map[string]any{"amount": 100, "from": "USD", "to": "EUR"}})
	if res.IsError || out["succeeded"] != true {
		t.Fatalf("call_tool: %s %v", text, out)
	}
	want := wantConversion(t)
	if got, _ := out["output"].(map[string]any); got["converted"] != want["converted"] {
		t.Fatalf("call_tool output %v, want the module's %v", out["output"], want)
	}

	// Bad input: a clear tool error naming the field; the server keeps serving.
	for _, c := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"call_tool", map[string]any{"toolId": "no.such_tool"}, "not found"},
		{"call_tool", map[string]any{"toolId": "currency.convert", "arguments": map[string]any{"amount": "lots", "from": "USD", "to": "EUR"}}, "amount"},
		{"call_tool", map[string]any{"arguments": map[string]any{}}, "toolId"},
		{"find_tools", map[string]any{"intent": "x", "limit": 99}, "limit"},
		{"fulfil_verb", map[string]any{"verb": "convert currency"}, "verb"},
		{"kb.hybrid_search", map[string]any{"query": "x", "strategy": "psychic"}, "strategy"},
		{"kb.answer", map[string]any{"question": "which tool converts money?"}, "no language model"},
	} {
		res, _, text := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text, c.says) {
			t.Errorf("%s %v: isError=%v %q, want an error saying %q", c.tool, c.args, res.IsError, text, c.says)
		}
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_mcp_tool", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown MCP tool must be an error")
	}

	// The kb tools.
	res, out, text = call(t, cs, "kb.hybrid_search", map[string]any{"query": "convert currency", "limit": 2})
	if hits, _ := out["hits"].([]any); res.IsError || len(hits) == 0 || hits[0].(map[string]any)["breakdown"] == nil {
		t.Fatalf("kb.hybrid_search: %s %v", text, out)
	}
	res, out, text = call(t, cs, "kb.get_document", map[string]any{"id": "currency.convert", "startLine": 1, "endLine": 3})
	if res.IsError || out["endLine"] != 3.0 || !strings.Contains(out["text"].(string), "{") {
		t.Fatalf("kb.get_document: %s %v", text, out)
	}
	res, out, text = call(t, cs, "kb.get_document", map[string]any{"id": "currency.convert", "startByte": 0, "endByte": 10})
	if res.IsError || len(out["text"].(string)) != 10 || out["totalBytes"].(float64) < 10 {
		t.Fatalf("kb.get_document bytes: %s %v", text, out)
	}
	res, out, text = call(t, cs, "kb.stats", map[string]any{})
	if res.IsError || out["stats"].(map[string]any)["tools"].(float64) == 0 || out["embedderHealthy"] != true || out["usage"] == nil {
		t.Fatalf("kb.stats: %s %v", text, out)
	}
	res, out, _ = call(t, cs, "kb.list_collections", map[string]any{"kind": "categories"})
	if res.IsError || len(out["categories"].(map[string]any)) == 0 {
		t.Fatalf("kb.list_collections: %v", out)
	}
	res, out, _ = call(t, cs, "kb.resolve_citations", map[string]any{"ids": []string{"currency.convert", "no.such"}})
	cites, _ := out["citations"].([]any)
	if res.IsError || len(cites) != 2 || cites[0].(map[string]any)["found"] != true || cites[1].(map[string]any)["found"] != false {
		t.Fatalf("kb.resolve_citations: %v", out)
	}

	// fulfil_verb runs the novel-verb workflow.
	res, out, text = call(t, cs, "fulfil_verb", map[string]any{"verb": "CONVERT_CURRENCY", "description": "convert an amount of money between currencies",
		"inputs": map[string]any{"amount": 100, "from": "USD", "to": "EUR"}, "threshold": hashingThreshold})
	if res.IsError || out["succeeded"] != true || !strings.HasPrefix(out["workflowId"].(string), "verb-CONVERT_CURRENCY-") {
		t.Fatalf("fulfil_verb: %s %v", text, out)
	}

	// A guest (no key) sees the public tools but not the admin ones, and
	// may not fulfil verbs.
	guest := e.mcpSession(t, "")
	var guestTools []string
	for tool, err := range guest.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		guestTools = append(guestTools, tool.Name)
	}
	if slices.Contains(guestTools, "kb.stats") || slices.Contains(guestTools, "fulfil_verb") || !slices.Contains(guestTools, "find_tools") {
		t.Errorf("a guest lists %v: only the tools it may call", guestTools)
	}
	if res, _, text := call(t, guest, "kb.stats", map[string]any{}); !res.IsError || !strings.Contains(text, "unauthenticated") {
		t.Errorf("guest kb.stats: %v %s", res.IsError, text)
	}
	if res, _, text := call(t, guest, "fulfil_verb", map[string]any{"verb": "CONVERT_CURRENCY"}); !res.IsError || !strings.Contains(text, "unauthenticated") {
		t.Errorf("guest fulfil_verb: %v %s", res.IsError, text)
	}
	// A bad credential cannot even connect.
	if _, err := mcp.Connect(context.Background(), e.api.URL, "tsk_k000000000000_"+strings.Repeat("A", 43), "e2e"); err == nil {
		t.Error("a made-up key connected")
	}
	// Oversized payloads are refused before the edge (413), and the server keeps serving.
	big := strings.Repeat("x", 9<<20)
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"intent": big}}); err == nil {
		t.Error("a 9 MiB call was accepted")
	}
	if res, _, text := call(t, e.mcpSession(t, e.admin), "find_tools", map[string]any{"intent": "convert currency"}); res.IsError {
		t.Fatalf("after the refused call: %s", text)
	}

	// Every call is audited and counted.
	page, err := e.store.AuditEvents(context.Background(), graph.AuditQuery{Action: "mcp.call_tool", Limit: 100})
	if err != nil || len(page.Items) < 3 {
		t.Fatalf("audit of call_tool: %d events, %v", len(page.Items), err)
	}
	if page.Items[0].Actor == "" && page.Items[len(page.Items)-1].Actor == "" {
		t.Errorf("audit events name no actor: %+v", page.Items[0])
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := false
	for _, f := range families {
		counted = counted || f.GetName() == "toolsmith_mcp_calls_total"
	}
	if !counted {
		t.Error("no toolsmith_mcp_calls_total in the metrics")
	}
}

// TestMCPCancelledCall cancels a call_tool whose module hangs: the call
// ends at once, the workflow is cancelled, and the server keeps serving.
func TestMCPCancelledCall(t *testing.T) {
	e := newEnv(t)
	e.serveMCP(60 * time.Second)
	cs := e.mcpSession(t, e.admin)
	arrived := e.gate.close()
	defer e.gate.open()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{
			"toolId": "currency.convert", "arguments": map[string]any{"amount": 1, "from": "USD", "to": "EUR"}}})
		done <- err
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the tool call never reached the module")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled call returned a result")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	eventually(t, 20*time.Second, func() error {
		resp, err := e.client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: server.Namespace(), Query: `WorkflowType = 'ExecuteToolWorkflow' AND ExecutionStatus = 'Canceled' AND TaskQueue = '` + e.queue + `'`})
		if err == nil && len(resp.GetExecutions()) > 0 {
			return nil
		}
		var runs []string
		all, _ := e.client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: server.Namespace(), Query: `WorkflowType = 'ExecuteToolWorkflow'`})
		for _, x := range all.GetExecutions() {
			runs = append(runs, fmt.Sprintf("%s %s %s", x.GetExecution().GetWorkflowId(), x.GetStatus(), x.GetTaskQueue()))
		}
		return fmt.Errorf("the workflow of the cancelled call was not cancelled (%v); runs: %q", err, runs)
	})
	e.gate.open()
	if res, _, text := call(t, e.mcpSession(t, e.admin), "find_tools", map[string]any{"intent": "convert currency"}); res.IsError {
		t.Fatalf("after a cancelled call: %s", text)
	}
}

// TestMCPStdioBridgeBinary builds the production binary (toolsmith-server,
// whose mcp command is toolsmith's) and drives `mcp --url` over stdio with
// the SDK's client.
func TestMCPStdioBridgeBinary(t *testing.T) {
	e := newEnv(t)
	e.serveMCP(30 * time.Second)
	bin := filepath.Join(t.TempDir(), "toolsmith-server")
	build := exec.Command("go", "build", "-o", bin, "../cmd/toolsmith-server")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(e.admin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e-stdio", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: exec.Command(bin, "mcp", "--url", e.api.URL, "--key-file", keyFile)}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	defer cs.Close()
	res, out, text := call(t, cs, "find_tools", map[string]any{"intent": "convert 100 US dollars to euros"})
	if res.IsError || !strings.Contains(text+jsonString(out), "currency.convert") {
		t.Fatalf("find_tools over stdio: %s %v", text, out)
	}
	res, out, text = call(t, cs, "call_tool", map[string]any{"toolId": "currency.convert", "arguments": map[string]any{"amount": 5, "from": "USD", "to": "EUR"}})
	if res.IsError || !strings.Contains(text+jsonString(out), `"succeeded":true`) {
		t.Fatalf("call_tool over stdio: %s %v", text, out)
	}
	if res, _, text := call(t, cs, "call_tool", map[string]any{"toolId": "no.such_tool"}); !res.IsError || !strings.Contains(text, "not found") {
		t.Fatalf("unknown tool over stdio: %v %s", res.IsError, text)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMCPWithTheTypeScriptSDK drives /mcp with a client this project did
// not write: the official TypeScript SDK (scripts/mcp-client, installed by
// `make mcp-client`, which `make test` runs), under node.
func TestMCPWithTheTypeScriptSDK(t *testing.T) {
	dir := filepath.Join("..", "scripts", "mcp-client")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil || serr != nil {
		if os.Getenv("TOOLSMITH_REQUIRE_MCP_CLIENT") != "" {
			t.Fatalf("the TypeScript MCP client is required: node on PATH and `npm ci --prefix %s` (node: %v)", dir, err)
		}
		t.Skipf("needs node and `npm ci --prefix %s`", dir)
	}
	e := newEnv(t)
	e.serveMCP(30 * time.Second)
	cmd := exec.Command(node, "client.mjs", e.api.URL+"/mcp", e.admin, "convert 100 US dollars to euros", "currency.convert",
		`{"amount": 100, "from": "USD", "to": "EUR"}`)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Server struct{ Name string }
		Tools  []string
		Found  map[string]any
		Called struct {
			IsError    bool
			Structured map[string]any
			Text       string
		}
		Bad struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node client output: %v\n%s", err, out)
	}
	if got.Server.Name != "toolsmith" || !slices.Contains(got.Tools, "find_tools") || !slices.Contains(got.Tools, "kb.hybrid_search") {
		t.Fatalf("initialize/list: %+v", got)
	}
	if tools, _ := got.Found["tools"].([]any); len(tools) == 0 || tools[0].(map[string]any)["toolId"] != "currency.convert" {
		t.Fatalf("find_tools: %v", got.Found)
	}
	if got.Called.IsError || got.Called.Structured["succeeded"] != true {
		t.Fatalf("call_tool: %+v", got.Called)
	}
	if !got.Bad.IsError || !strings.Contains(got.Bad.Text, "not found") {
		t.Fatalf("unknown tool: %+v", got.Bad)
	}

	// A bad key: the SDK's connection error carries the server's reason
	// for refusing it (the 401's message), not only a status.
	badKey := "tsk_k000000000000_" + strings.Repeat("A", 43)
	cmd = exec.Command(node, "client.mjs", e.api.URL+"/mcp", badKey, "convert", "currency.convert", `{}`)
	cmd.Dir = dir
	stderr.Reset()
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err == nil {
		t.Fatalf("a made-up key connected: %s", out)
	}
	if msg := stderr.String(); !strings.Contains(msg, "API key k000000000000 is not valid here") {
		t.Fatalf("a bad key's connection error lacks the server's reason (%v):\n%s%s", err, msg, out)
	} else {
		t.Logf("bad key: %s", strings.SplitN(msg, "\n", 2)[0])
	}
}

// TestMCPCatalogueFollowsTheRegistry: every active tool is an MCP tool of
// its own; registering one sends notifications/tools/list_changed and it
// appears, deprecating it withdraws it, all without a restart; each caller
// lists only the tools it may execute, and an exposed tool runs like
// call_tool.
func TestMCPCatalogueFollowsTheRegistry(t *testing.T) {
	e := newEnv(t)
	e.serveMCP(30 * time.Second)
	changed := make(chan struct{}, 16)
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e-listener", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	labKey := e.key(identity.NewKey{Owner: "lab staff", Level: "user", Roles: []string{"lab"}})
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.api.URL + "/mcp", HTTPClient: mcp.HTTPClient(labKey)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list := func(s *sdk.ClientSession) []string {
		var names []string
		for tool, err := range s.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		return names
	}
	manifest := json.RawMessage(`{"toolId": "lab.secret_probe", "verb": "PROBE_SECRET", "name": "Secret probe",
		"description": "Probes the lab's secret instruments; only lab staff may run it.", "category": "lab",
		"permissionsRequired": ["role:lab"], "requiredPermission": "user", "module": "lab",
		"inputSchema": {"type": "object", "properties": {"depth": {"type": "integer"}}}}`)
	if slices.Contains(list(cs), "lab__secret_probe") {
		t.Fatal("listed before it was registered")
	}
	if _, err := e.reg.Register(context.Background(), registry.Request{Manifest: manifest}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a registration")
	}
	if names := list(cs); !slices.Contains(names, "lab__secret_probe") {
		t.Fatalf("the registered tool is not listed (no restart needed): %v", names)
	}
	// A caller without the role lists neither it nor what it may not call.
	user := e.mcpSession(t, e.key(identity.NewKey{Owner: "ana", Level: "user"}))
	if names := list(user); slices.Contains(names, "lab__secret_probe") || !slices.Contains(names, "currency__convert") {
		t.Fatalf("a user without role lab lists %v", names)
	}
	// Called by name it answers as a name no tool has: the SDK's unknown
	// tool error, not a tool error that would tell it exists.
	if res, err := user.CallTool(context.Background(), &sdk.CallToolParams{Name: "lab__secret_probe", Arguments: map[string]any{"depth": 1}}); err == nil ||
		!strings.Contains(err.Error(), `unknown tool "lab__secret_probe"`) {
		t.Fatalf("a hidden tool called by name: %+v %v", res, err)
	}
	// An exposed tool runs like call_tool.
	res, out, text := call(t, user, "currency__convert", map[string]any{"amount": 3, "from": "USD", "to": "EUR"})
	if res.IsError || out["succeeded"] != true {
		t.Fatalf("currency__convert: %s %v", text, out)
	}
	if err := e.reg.Deprecate(context.Background(), "lab.secret_probe", "retired"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if slices.Contains(list(cs), "lab__secret_probe") {
			return errors.New("a deprecated tool is still listed")
		}
		return nil
	})
}
