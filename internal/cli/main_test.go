package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/internal/testwait"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/tool"
)

// instance is a running `toolsmith dev` inside the test process.
type instance struct {
	base string
	// auth is the Authorization header of the data dir's first-start owner key.
	auth   string
	stdout *testwait.Buffer
	stderr *testwait.Buffer
	cancel context.CancelFunc
	done   chan int
}

// startDev runs the real dev wiring with the hashing embedder on dataDir and
// a free port, and waits until it reports ready.
func startDev(t *testing.T, dataDir string, extra ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{stdout: &testwait.Buffer{}, stderr: &testwait.Buffer{}, cancel: cancel, done: make(chan int, 1)}
	ready := make(chan string, 1)
	e := &env{
		devTemporal: testDevTemporal,
		stdout:      in.stdout,
		stderr:      in.stderr,
		lookupEnv:   func(string) (string, bool) { return "", false },
		onReady:     func(base string) { ready <- base },
	}
	// Port 0 everywhere: the test must not collide with a running dev
	// system or with other test packages' Temporal servers.
	args := append([]string{"dev", "--embedder", "hashing", "--data-dir", dataDir, "--http-addr", "127.0.0.1:0",
		"--temporal-addr", "127.0.0.1:0", "--ui-addr", "127.0.0.1:0", "--log-level", "warn"}, extra...)
	go func() { in.done <- run(ctx, args, e) }()
	select {
	case in.base = <-ready:
	case code := <-in.done:
		cancel()
		t.Fatalf("dev exited with %d before ready:\n%s\n%s", code, in.stdout, in.stderr)
	case <-time.After(2 * time.Minute):
		cancel()
		t.Fatalf("dev not ready after 2 minutes:\n%s", in.stderr)
	}
	t.Cleanup(func() { in.stop(t) })
	if secret, err := readKeyFile(filepath.Join(dataDir, AdminKeyFile)); err == nil {
		in.auth = "Bearer " + secret
	}
	return in
}

// stop cancels the instance (as SIGINT would) and checks a clean exit.
func (in *instance) stop(t *testing.T) {
	t.Helper()
	if in.cancel == nil {
		return
	}
	in.cancel()
	in.cancel = nil
	select {
	case code := <-in.done:
		if code != exitOK {
			t.Errorf("dev exited with %d:\n%s", code, in.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Error("dev did not shut down within 30s")
	}
}

type envelope struct {
	Status string          `json:"status"`
	Data   json.RawMessage `json:"data"`
	Error  *struct {
		Code   string `json:"code"`
		Fields []struct {
			Path string `json:"path"`
		} `json:"fields"`
	} `json:"error"`
}

func (in *instance) call(t *testing.T, method, path string, body any, headers ...string) (int, envelope) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, in.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, env
}

// everything lists every tool of any status an anonymous caller may see, as
// "id status name" lines.
func (in *instance) everything(t *testing.T) []string {
	t.Helper()
	var out []string
	cursor := ""
	for {
		code, env := in.call(t, http.MethodGet, "/api/v1/tools?limit=1000&status=active,deprecated,disabled&cursor="+cursor, nil)
		if code != http.StatusOK {
			t.Fatalf("list: %d", code)
		}
		var page struct {
			Items []graph.ToolSummary `json:"items"`
			Next  string              `json:"nextCursor"`
		}
		if err := json.Unmarshal(env.Data, &page); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			out = append(out, it.ID+" "+it.Status+" "+it.Name)
		}
		if page.Next == "" {
			return out
		}
		cursor = page.Next
	}
}

func validManifest(id string) map[string]any {
	return map[string]any{
		"toolId":              id,
		"verb":                "TRANSLATE_TEXT",
		"name":                "Translate text",
		"description":         "Translates a text between two languages and reports the detected source language.",
		"category":            "language",
		"permissionsRequired": []string{"public"},
		"inputSchema": map[string]any{
			"type":       "object",
			"required":   []string{"text", "to"},
			"properties": map[string]any{"text": map[string]any{"type": "string"}, "to": map[string]any{"type": "string"}},
		},
	}
}

// TestDevEndToEnd runs the real dev wiring: the demo catalogue is listed,
// a registration is 201 and readable, an invalid one is a 4xx naming the
// field and changes nothing, and after a restart on the same data dir
// everything (including edits to demo tools) is still there.
func TestDevEndToEnd(t *testing.T) {
	dataDir := t.TempDir()
	in := startDev(t, dataDir)

	if !strings.Contains(in.stdout.String(), in.base+"/api/v1/tools") {
		t.Fatalf("banner lacks the tools URL:\n%s", in.stdout)
	}
	code, env := in.call(t, http.MethodGet, "/healthz", nil)
	if code != http.StatusOK || env.Status != "ok" {
		t.Fatalf("healthz: %d %+v", code, env)
	}

	// The demo catalogue is there.
	manifests, err := demo.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	// Besides the catalogue, dev's start-up module discovery registers the
	// demo modules' own tools (text.stats). Run one discovery to completion
	// now so that no registration lands while the catalogue is compared.
	code, env = in.call(t, http.MethodPost, "/api/v1/modules/refresh?wait=60s", nil, "Authorization", in.auth)
	if code != http.StatusOK || !strings.Contains(string(env.Data), `"completed"`) {
		t.Fatalf("module discovery: %d %s", code, env.Data)
	}
	visibleVia := func(ms []tool.Manifest) map[string]bool {
		out := map[string]bool{}
		for _, m := range ms {
			sum := tool.ToGraph(m, nil).ToolSummary
			if (access.Caller{}).Allows(&sum) {
				out[m.ToolID] = true
			}
		}
		return out
	}
	visible := visibleVia(manifests)
	mayAppear := visibleVia(manifests)
	_, mods := demomodule.Mux()
	for _, m := range mods {
		for id := range visibleVia(m.Manifests()) {
			mayAppear[id] = true
		}
	}
	all := in.everything(t)
	seen := map[string]bool{}
	for _, line := range all {
		id, _, _ := strings.Cut(line, " ")
		seen[id] = true
		if !mayAppear[id] {
			t.Errorf("an anonymous caller sees %s, which is neither a visible demo tool nor a demo module's", id)
		}
	}
	for id := range visible {
		if !seen[id] {
			t.Errorf("demo tool %s, visible to an anonymous caller, is missing from the index", id)
		}
	}
	if len(visible) == 0 || t.Failed() {
		t.Fatalf("an anonymous caller sees %d tools, the demo catalogue has %d visible to it (%d in all)", len(all), len(visible), len(manifests))
	}
	code, env = in.call(t, http.MethodGet, "/api/v1/tools", nil)
	var page struct {
		Items []graph.ToolSummary `json:"items"`
		Count int                 `json:"count"`
	}
	if err := json.Unmarshal(env.Data, &page); err != nil || code != http.StatusOK || page.Count == 0 {
		t.Fatalf("anonymous list: %d %s %v", code, env.Data, err)
	}

	// The first start made an owner key, readable by its owner only; without
	// it (or with a made-up one) a write is refused and changes nothing.
	keyFile := filepath.Join(dataDir, AdminKeyFile)
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 || in.auth == "" {
		t.Fatalf("owner key file %s: %v %v", keyFile, fi, err)
	}
	if !strings.Contains(in.stderr.String(), keyFile) {
		t.Fatalf("dev did not say where the owner key is:\n%s", in.stderr)
	}
	for _, auth := range []string{"", "Bearer tsk_k000000000000_" + strings.Repeat("A", 43), "Basic b3duZXI6b3duZXI="} {
		code, env = in.call(t, http.MethodPost, "/api/v1/tools/register", map[string]any{"manifest": validManifest("lang.translate")},
			"Authorization", auth, "X-Permission-Level", "owner", "X-User-Id", "root")
		if code != http.StatusUnauthorized {
			t.Fatalf("register with Authorization %q: %d %s, want 401", auth, code, env.Data)
		}
	}
	if code, _ = in.call(t, http.MethodGet, "/api/v1/tools/lang.translate", nil); code != http.StatusNotFound {
		t.Fatalf("a refused registration was stored: %d", code)
	}

	// A valid registration.
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/register", map[string]any{"manifest": validManifest("lang.translate")}, "Authorization", in.auth)
	if code != http.StatusCreated {
		t.Fatalf("register: %d %s", code, env.Data)
	}
	code, env = in.call(t, http.MethodGet, "/api/v1/tools/lang.translate", nil)
	if code != http.StatusOK || !strings.Contains(string(env.Data), `"TRANSLATE_TEXT"`) {
		t.Fatalf("get registered: %d %s", code, env.Data)
	}

	// Retrieval is wired to the same store and sees it at once.
	code, env = in.call(t, http.MethodGet, "/api/v1/tools/retrieval/search?q=translate+text+between+languages&includeExamples=false", nil)
	if code != http.StatusOK || !strings.Contains(string(env.Data), `"lang.translate"`) {
		t.Fatalf("retrieval search: %d %s", code, env.Data)
	}

	// An invalid one: 422 naming the field, nothing changed.
	before := in.everything(t)
	bad := validManifest("lang.detect")
	bad["inputSchema"].(map[string]any)["properties"].(map[string]any)["text"] = map[string]any{"type": "strng"}
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/register", map[string]any{"manifest": bad}, "Authorization", in.auth)
	if code != http.StatusUnprocessableEntity || env.Error == nil || len(env.Error.Fields) == 0 ||
		!strings.HasPrefix(env.Error.Fields[0].Path, "manifest.inputSchema.properties.text") {
		t.Fatalf("invalid register: %d %+v", code, env.Error)
	}
	if after := in.everything(t); !slices.Equal(before, after) {
		t.Fatalf("invalid registration changed the catalogue:\nbefore %v\nafter  %v", before, after)
	}
	if code, _ = in.call(t, http.MethodGet, "/api/v1/tools/lang.detect", nil); code != http.StatusNotFound {
		t.Fatalf("invalid tool is readable: %d", code)
	}

	// A novel verb (a dry run) goes through the workflow, which counts it.
	code, env = in.call(t, http.MethodPost, "/api/v1/verbs?wait=60s", map[string]any{
		"verb": "CONVERT_CURRENCY", "description": "convert an amount of money between currencies",
		"inputs": map[string]any{"amount": 1, "from": "USD", "to": "EUR"}, "options": map[string]any{"dryRun": true},
	}, "Authorization", in.auth)
	if code != http.StatusOK {
		t.Fatalf("verb: %d %s", code, env.Data)
	}

	// MCP at /mcp: a module tool's source document is its module's manifest.
	cs, err := mcp.Connect(context.Background(), in.base, strings.TrimPrefix(in.auth, "Bearer "), "test")
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "kb.get_document", Arguments: map[string]any{"id": "currency.convert", "document": "source"}})
	if err != nil || res.IsError {
		t.Fatalf("kb.get_document source: %v %+v", err, res)
	}
	if doc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(doc), "module-manifest") || !strings.Contains(string(doc), "convert") {
		t.Fatalf("source document: %s", doc)
	}
	_ = cs.Close()

	// A tool execution is counted by outcome (below).
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/currency.convert/execute?wait=60s", map[string]any{
		"inputs": map[string]any{"amount": 1, "from": "USD", "to": "EUR"},
	}, "Authorization", in.auth)
	if code != http.StatusOK {
		t.Fatalf("execute: %d %s", code, env.Data)
	}

	// /metrics carries the HTTP, retrieval and Temporal SDK client metrics,
	// and the memory trims (which `toolsmith bench` waits for).
	req, _ := http.NewRequest(http.MethodGet, in.base+"/metrics", nil)
	req.Header.Set("Authorization", in.auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	scraped, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, family := range []string{"toolsmith_http_requests_total", "toolsmith_search_duration_seconds", "temporal_request_total", "toolsmith_fulfilments_total", "agent_tool_group_availability", "toolsmith_memory_trims_total", "toolsmith_tool_executions_total"} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(scraped), "\n"+family) {
			t.Errorf("/metrics (%d) lacks %s", resp.StatusCode, family)
		}
	}
	// No label names a tool: operators who may not execute every tool
	// read /metrics, and a label per catalogue tool grows with it.
	if strings.Contains(string(scraped), "currency.convert") {
		t.Errorf("/metrics names a tool: %q", grepLines(string(scraped), "currency.convert"))
	}

	// Edit and deprecate demo tools: a restart must not revert them.
	first := strings.Fields(before[0])[0]
	code, env = in.call(t, http.MethodDelete, "/api/v1/tools/"+first+"?reason=e2e", nil, "Authorization", in.auth)
	if code != http.StatusOK {
		t.Fatalf("deprecate %s: %d %s", first, code, env.Data)
	}
	want := in.everything(t)
	in.stop(t)

	// Restart on the same data dir: everything is still there.
	in2 := startDev(t, dataDir)
	if in2.auth != in.auth {
		t.Fatal("a restart replaced the owner key")
	}
	if got := in2.everything(t); !slices.Equal(got, want) {
		t.Fatalf("after restart:\n got %v\nwant %v", got, want)
	}
	if code, _ := in2.call(t, http.MethodGet, "/api/v1/tools/lang.translate", nil); code != http.StatusOK {
		t.Fatalf("registered tool after restart: %d", code)
	}
	if !slices.Contains(want, first+" deprecated "+strings.SplitN(before[0], " ", 3)[2]) {
		t.Fatalf("deprecation of %s not in the catalogue: %v", first, want)
	}
}

func TestDevNoDemo(t *testing.T) {
	in := startDev(t, t.TempDir(), "--no-demo")
	if got := in.everything(t); len(got) != 0 {
		t.Fatalf("--no-demo loaded %d tools", len(got))
	}
}

func TestEmbedderMismatchIsAClearError(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	st, err := openStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := checkEmbedder(context.Background(), cfg, st, hashing.New(256)); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	if err := checkEmbedder(context.Background(), cfg, st, hashing.New(256)); err != nil {
		t.Fatalf("same embedder again: %v", err)
	}
	err = checkEmbedder(context.Background(), cfg, st, hashing.New(128))
	if !errors.Is(err, graph.ErrEmbedderMismatch) {
		t.Fatalf("other dimension: %v", err)
	}
	for _, want := range []string{cfg.StorePath(), "dimension 256", "dimension 128", "reindex", "--data-dir", "--embedder"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("mismatch error does not mention %q: %v", want, err)
		}
	}
}

func TestDevRefusesAStoreOfAnotherEmbedder(t *testing.T) {
	dataDir := t.TempDir()
	cfg := config.Default()
	cfg.DataDir = dataDir
	st, err := openStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureEmbedder(context.Background(), graph.EmbedderInfo{Model: "some-other-model", Dimension: 384}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	stderr := &testwait.Buffer{}
	e := &env{devTemporal: testDevTemporal, stdout: io.Discard, stderr: stderr, lookupEnv: func(string) (string, bool) { return "", false }}
	code := run(context.Background(), []string{"dev", "--embedder", "hashing", "--data-dir", dataDir, "--http-addr", "127.0.0.1:0"}, e)
	if code != exitError || !strings.Contains(stderr.String(), `"some-other-model"`) || !strings.Contains(stderr.String(), "reindex") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		code     int
		out, err string
	}{
		{"no args prints usage", nil, nil, exitUsage, "model fetch", ""},
		{"help", []string{"help"}, nil, exitOK, "toolsmith dev", ""},
		{"unknown", []string{"serve"}, nil, exitUsage, "", `unknown command "serve"`},
		{"version", []string{"version"}, nil, exitOK, "toolsmith dev (", ""},
		{"flag help", []string{"dev", "-h"}, nil, exitOK, "--data-dir", ""},
		{"double-dash help", []string{"dev", "--help"}, nil, exitOK, "[env TOOLSMITH_DATA_DIR]", ""},
		{"subcommand help lists the Temporal flags", []string{"airlock", "approve", "-h"}, nil, exitOK, "--temporal-addr", ""},
		{"group help", []string{"airlock", "--help"}, nil, exitOK, "check", ""},
		{"unknown subcommand", []string{"airlock", "nope"}, nil, exitUsage, "", `unknown command "nope"`},
		{"eval help exits 0", []string{"eval", "--help"}, nil, exitOK, "", "--tools"},
		{"model fetch help", []string{"model", "fetch", "--help"}, nil, exitOK, "--model-dir", ""},
		{"check wants one DIR", []string{"airlock", "check", "--json"}, nil, exitUsage, "", "one DIR"},
		{"check takes --json after DIR", []string{"airlock", "check", "a", "--json", "--limit", "-1"}, nil, exitUsage, "", "--limit must be"},
		{"approve takes Temporal flags after the id", []string{"airlock", "approve", "airlock-1", "--temporal-addr", "nohost", "--policy", "{}"}, nil, exitUsage, "", "--temporal-addr"},
		{"approve checks the policy", []string{"airlock", "approve", "airlock-1", "--policy", `{"nope": 1}`}, nil, exitUsage, "", "--policy"},
		{"reject needs a reason", []string{"airlock", "reject", "airlock-1"}, nil, exitUsage, "", "--reason"},
		{"env names its variable", []string{"airlock", "reject", "airlock-1", "--reason", "x"}, map[string]string{"TOOLSMITH_TEMPORAL_ADDR": "bad"}, exitUsage, "", "TOOLSMITH_TEMPORAL_ADDR"},
		{"completion", []string{"completion", "bash"}, nil, exitOK, "bash completion", ""},
		{"interspersed config flag", []string{"version", "--nope"}, nil, exitUsage, "", "--nope"},
		{"bad flag names it", []string{"dev", "--store", "mongo"}, nil, exitUsage, "", "--store"},
		{"bad env names it", []string{"api"}, map[string]string{"TOOLSMITH_EMBEDDER": "bert"}, exitUsage, "", "TOOLSMITH_EMBEDDER"},
		{"neo4j needs uri", []string{"api", "--store", "neo4j"}, nil, exitUsage, "", "--neo4j-uri"},
		{"stray argument", []string{"dev", "--no-demo", "now"}, nil, exitUsage, "", `"now"`},
		{"model fetch rejects --store", []string{"model", "fetch", "--store", "sqlite"}, nil, exitUsage, "", "store"},
		{"healthcheck needs a target", []string{"healthcheck"}, nil, exitUsage, "", "--url or --tcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &env{devTemporal: testDevTemporal, stdout: &out, stderr: &errb, lookupEnv: func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }}
			code := run(context.Background(), tt.args, e)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tt.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tt.out) || !strings.Contains(errb.String(), tt.err) {
				t.Fatalf("stdout %q (want %q)\nstderr %q (want %q)", out.String(), tt.out, errb.String(), tt.err)
			}
		})
	}
}

func TestHealthcheck(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer down.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := ln.Addr().String()
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln2.Addr().String()
	ln2.Close()
	defer ln.Close()

	tests := []struct {
		args []string
		code int
	}{
		{[]string{"--url", ok.URL}, exitOK},
		{[]string{"--url", down.URL}, exitError},
		{[]string{"--tcp", open}, exitOK},
		{[]string{"--tcp", closed, "--timeout", "500ms"}, exitError},
		{[]string{"--url", ok.URL, "--tcp", open}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			e := &env{devTemporal: testDevTemporal, stdout: io.Discard, stderr: io.Discard}
			if code := run(context.Background(), append([]string{"healthcheck"}, tt.args...), e); code != tt.code {
				t.Fatalf("exit %d, want %d", code, tt.code)
			}
		})
	}
}

func TestReadiness(t *testing.T) {
	r := newReadiness("demo")
	if err := r.check(); err == nil || !strings.Contains(err.Error(), "demo") {
		t.Fatalf("waiting: %v", err)
	}
	r.wait("temporal")
	r.done("demo")
	if err := r.check(); err == nil || !strings.Contains(err.Error(), "temporal") {
		t.Fatalf("still waiting: %v", err)
	}
	r.done("temporal")
	if err := r.check(); err != nil {
		t.Fatalf("ready: %v", err)
	}
	r.stop()
	if err := r.check(); err == nil {
		t.Fatal("ready while stopping")
	}
}

func TestGroupStopsOnFirstFailure(t *testing.T) {
	g, ctx := newGroup(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	stopped := make(chan struct{})
	g.Go(ctx, "long", func(ctx context.Context) error { <-ctx.Done(); close(stopped); return nil })
	g.Go(ctx, "broken", func(context.Context) error { return fmt.Errorf("boom") })
	err := g.Wait()
	if err == nil || !strings.Contains(err.Error(), "broken: boom") {
		t.Fatalf("Wait: %v", err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("the other component was not stopped")
	}
}

func TestDisplayAddr(t *testing.T) {
	tests := map[string]string{"0.0.0.0:80": "127.0.0.1:80", "[::]:81": "127.0.0.1:81", "127.0.0.1:82": "127.0.0.1:82", "[::1]:83": "[::1]:83"}
	for in, want := range tests {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := displayAddr(a); got != want {
			t.Errorf("displayAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestREADMEQuotesWhatDevPrints holds the README to the banner and the
// readiness reason dev really prints.
func TestREADMEQuotesWhatDevPrints(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	reason := newReadiness(devReadiness...).check().Error()
	if want := `"reason":"` + reason + `"`; !strings.Contains(readme, want) {
		t.Errorf("README does not quote the readiness reason %s", want)
	}
	var b bytes.Buffer
	printBanner(&b, "http://127.0.0.1:8080", func(string) []string { return nil })
	banner := regexp.MustCompile(`(?m)^Toolsmith (\S+) is ready\.$`)
	if !banner.MatchString(b.String()) {
		t.Fatalf("banner %q does not have the expected form", b.String())
	}
	m := banner.FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("README does not show the banner line")
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		if !strings.Contains(readme, line) {
			t.Errorf("README's banner lacks %q", line)
		}
	}
}

// TestOldStyleCommandsPlugIn checks the table's old-style line: a
// func(ctx, *env, []string) error gets its raw arguments (flags included),
// nests under a several-word name, and -h is a clean exit.
func TestOldStyleCommandsPlugIn(t *testing.T) {
	var got []string
	old := func(_ context.Context, _ *env, args []string) error {
		got = args
		if slices.Contains(args, "-h") {
			return flag.ErrHelp
		}
		return nil
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"example", "run", "ana", "--level", "admin"}, exitOK},
		{[]string{"example", "run", "-h"}, exitOK},
	} {
		e := &env{devTemporal: testDevTemporal, stdout: io.Discard, stderr: io.Discard, lookupEnv: func(string) (string, bool) { return "", false }}
		root := newRoot(e)
		attach(root, command{"example run", "an old-style command", old, false}, e)
		root.SetArgs(tt.args)
		cmd, err := root.ExecuteC()
		if code := exitCode(e, cmd, err); code != tt.code || !slices.Equal(got, tt.args[2:]) {
			t.Fatalf("%v: exit %d, args %q", tt.args, code, got)
		}
	}
}

// runCLI runs the toolsmith command line in-process and returns its exit
// code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{devTemporal: testDevTemporal, stdout: &stdout, stderr: &stderr, lookupEnv: func(string) (string, bool) { return "", false }}
	code := run(context.Background(), args, e)
	return code, stdout.String(), stderr.String()
}

func TestKeysCommands(t *testing.T) {
	dataDir := t.TempDir()
	// The first start writes the owner key; later commands use it.
	startDev(t, dataDir).stop(t)
	// Against the data dir's store: the secret is the last line of stdout.
	code, out, errOut := runCLI(t, "keys", "create", "--data-dir", dataDir, "--owner", "ci bot", "--level", "user", "--role", "approver,auditor")
	if code != exitOK {
		t.Fatalf("keys create: %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	secret := lines[len(lines)-1]
	if !regexp.MustCompile(`^tsk_k[0-9a-f]{12}_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
		t.Fatalf("last line %q is not a secret", secret)
	}
	id := strings.Split(secret, "_")[1]
	code, out, _ = runCLI(t, "keys", "list", "--data-dir", dataDir)
	if code != exitOK || !strings.Contains(out, id) || !strings.Contains(out, "approver,auditor") || strings.Contains(out, secret) {
		t.Fatalf("keys list: %d\n%s", code, out)
	}
	// Bad input exits 2 and names the field; nothing is stored.
	if code, _, errOut = runCLI(t, "keys", "create", "--data-dir", dataDir, "--level", "user"); code == exitOK || !strings.Contains(errOut, "owner") {
		t.Fatalf("keys create without --owner: %d %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, "keys", "create", "--data-dir", dataDir, "--owner", "x", "--level", "root"); code == exitOK || !strings.Contains(errOut, "level") {
		t.Fatalf("keys create --level root: %d %s", code, errOut)
	}

	// Against a running server with its owner key: the same operations
	// through /api/v1/admin/keys, and a revoked key stops working at once.
	in := startDev(t, dataDir)
	if in.auth == "" {
		t.Fatal("no owner key in the data dir")
	}
	code, out, errOut = runCLI(t, "keys", "revoke", "--data-dir", dataDir, "--url", in.base, id)
	if code != exitOK {
		t.Fatalf("keys revoke --url: %d\n%s%s", code, out, errOut)
	}
	if code, env := in.call(t, http.MethodGet, "/api/v1/whoami", nil, "Authorization", "Bearer "+secret); code != http.StatusUnauthorized {
		t.Fatalf("revoked key: %d %s", code, env.Data)
	}
	code, out, errOut = runCLI(t, "keys", "create", "--data-dir", dataDir, "--url", in.base, "--owner", "planner", "--level", "user", "--json")
	if code != exitOK {
		t.Fatalf("keys create --url: %d\n%s%s", code, out, errOut)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	secret = lines[len(lines)-1]
	code, env := in.call(t, http.MethodGet, "/api/v1/whoami", nil, "Authorization", "Bearer "+secret, "X-Permission-Level", "owner")
	if code != http.StatusOK || !strings.Contains(string(env.Data), `"level":"user"`) {
		t.Fatalf("whoami with the new key (and a header claiming owner): %d %s", code, env.Data)
	}
	// The audit log holds the creation and the revocation.
	code, env = in.call(t, http.MethodGet, "/api/v1/admin/audit?action=admin.keys", nil, "Authorization", in.auth)
	if code != http.StatusOK || !strings.Contains(string(env.Data), `"admin.keys.delete"`) && !strings.Contains(string(env.Data), `"admin.keys"`) {
		t.Fatalf("audit: %d %s", code, env.Data)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}
