package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/internal/temporalserver"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/worker"
	"github.com/toolsmith/toolsmith/workflows"
)

// embedDim is the hashing embedder's dimension in these tests.
const embedDim = 256

// server is the one Temporal server of the package, started by TestMain:
// starting one costs seconds, and every env uses its own task queue, store
// and modules, so tests do not see each other's work.
var server *temporalserver.Server

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode (needs an in-process Temporal server)")
		return 0
	}
	gin.SetMode(gin.TestMode)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	server, err = temporalserver.Start(ctx, temporalserver.Options{
		FrontendAddr:     "127.0.0.1:0",
		SearchAttributes: workflows.SearchAttributes(),
		Logger:           logger,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start temporal:", err)
		return 1
	}
	defer server.Stop()
	fmt.Printf("e2e: server=in-process Temporal (internal/temporalserver, in-memory SQLite) at %s; "+
		"store=graph/sqlite (file per test); embedder=%s dim %d; modules=internal/demomodule on httptest\n",
		server.Addr(), hashing.Name, embedDim)
	return m.Run()
}

// env is one test's Toolsmith: store, modules, worker and API, on the
// shared server with a task queue of its own.
type env struct {
	t       testing.TB
	client  client.Client
	store   *sqlite.Store
	deps    worker.Deps
	queue   string
	worker  sdkworker.Worker
	modules map[string]*demomodule.Module
	gate    *gate
	api     *httptest.Server
	// keys mints API keys in the env's store; admin is an admin key's
	// secret, the credential every request carries unless it sets its own
	// Authorization header.
	keys   *identity.KeyService
	admin  string
	search *retrieval.Service
	reg    *registry.Service
	// hooks run after every registry write (the MCP catalogue).
	hooks []func(toolID string)
	// handlers are served beside /api/v1 by serve (the MCP endpoint).
	handlers []api.Handler
	// airlockFiles is the airlock's state directory (airlockEnv).
	airlockFiles *airlock.Files
	mu           sync.Mutex
	stopOnce     bool
}

func newEnv(t testing.TB) *env {
	e := &env{t: t, queue: "e2e-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())}
	ctx := context.Background()

	c, err := server.Dial(ctx, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	t.Cleanup(c.Close)

	store, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	e.store = store
	emb := hashing.New(embedDim)
	search := retrieval.New(store, emb, retrieval.Options{})
	e.search = search
	reg := registry.New(store, emb, registry.WithOnChange(func(id string) {
		search.Invalidate(id)
		e.mu.Lock()
		hooks := slices.Clone(e.hooks)
		e.mu.Unlock()
		for _, h := range hooks {
			h(id)
		}
	}))
	e.reg = reg

	mux, mods := demomodule.Mux()
	e.modules = mods
	e.gate = &gate{next: mux}
	modSrv := httptest.NewServer(e.gate)
	t.Cleanup(modSrv.Close)
	cfg := modules.NewConfig()
	for _, name := range demomodule.Names() {
		cfg.Modules[name] = modSrv.URL + "/" + name
	}
	router := modules.NewRouter(cfg, modules.WithRegistrar(worker.RegistryRegistrar(reg)))

	e.deps = worker.Deps{
		Store:     store,
		Searcher:  activities.RetrievalSearcher{Service: search},
		Usage:     search,
		Router:    router,
		Reindexer: reg,
		Gaps:      activities.StoreGaps{Store: store, Entities: search.Entities},
		Runs:      verbs.Runs{Temporal: c, Namespace: server.Namespace()},
		Options:   worker.Options{TaskQueue: e.queue},
	}
	e.startWorker()
	t.Cleanup(e.stopWorker)

	e.keys = identity.NewKeyService(store)
	e.admin = e.key(identity.NewKey{Owner: "e2e admin", Level: "admin", Groups: []string{access.Wildcard}})
	e.serve(verbs.New(c, store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace(), UIBaseURL: "http://ui.invalid", Audit: audit.New(store)}))

	// Discover the demo modules through the API, as an operator would.
	var out struct {
		Status string `json:"status"`
		Result struct {
			Reports []modules.ModuleReport `json:"reports"`
		} `json:"result"`
	}
	if code := e.post("/api/v1/modules/refresh?wait=30s", nil, &out); code != http.StatusOK || out.Status != "completed" {
		t.Fatalf("modules refresh: HTTP %d status %q", code, out.Status)
	}
	for _, r := range out.Result.Reports {
		if r.Error != "" {
			t.Fatalf("module %s: %s", r.Module, r.Error)
		}
	}
	return e
}

func (e *env) startWorker() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.worker = worker.New(e.client, e.deps)
	if err := e.worker.Start(); err != nil {
		e.t.Fatalf("worker start: %v", err)
	}
	e.stopOnce = false
}

func (e *env) stopWorker() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopOnce {
		e.worker.Stop()
		e.stopOnce = true
	}
}

// post sends body as JSON and decodes the envelope's data into out.
func (e *env) post(path string, body any, out any) int {
	return e.do(http.MethodPost, path, body, nil, out)
}

// serve (re)starts the env's HTTP server: the production server (the
// authorization table, API-key authentication and the audit log in the
// env's store) with the given features mounted.
func (e *env) serve(features ...httpx.Mounter) {
	if e.api != nil {
		e.api.Close()
	}
	srv := api.New(api.Options{
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Auth:     &identity.Authenticator{Keys: e.keys},
		Audit:    audit.New(e.store),
		Handlers: e.handlers,
	}, features...)
	e.api = httptest.NewServer(srv.Handler())
	e.t.Cleanup(e.api.Close)
}

// key creates an API key in the env's store and returns its secret.
func (e *env) key(k identity.NewKey) string {
	e.t.Helper()
	_, secret, err := e.keys.Create(context.Background(), identity.Principal{}, k)
	if err != nil {
		e.t.Fatalf("create key: %v", err)
	}
	return secret
}

// bearer is a header carrying a key's secret.
func bearer(secret string) http.Header {
	return http.Header{"Authorization": {"Bearer " + secret}}
}

func (e *env) do(method, path string, body any, header http.Header, out any) int {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.api.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.admin)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := e.api.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		e.t.Fatalf("%s %s: HTTP %d, body not an envelope: %s", method, path, resp.StatusCode, raw)
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			e.t.Fatalf("%s %s: decode data: %v: %s", method, path, err, env.Data)
		}
	}
	if env.Status != "success" {
		e.t.Logf("%s %s: HTTP %d error %s", method, path, resp.StatusCode, env.Error)
	}
	return resp.StatusCode
}

// gate holds POST …/execute requests while closed, reporting each arrival,
// and lets those whose client is still waiting through when opened.
type gate struct {
	next    http.Handler
	mu      sync.Mutex
	closed  bool
	release chan struct{}
	arrived chan string
}

// close makes later execute calls wait; arrivals are reported on the
// returned channel (the idempotency key of each).
func (g *gate) close() <-chan string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed, g.release, g.arrived = true, make(chan struct{}), make(chan string, 16)
	return g.arrived
}

// open releases the waiting calls.
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closed = false
		close(g.release)
	}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	closed, release, arrived := g.closed, g.release, g.arrived
	g.mu.Unlock()
	if closed && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/execute") {
		arrived <- r.Header.Get(demomodule.HeaderIdempotencyKey)
		select {
		case <-release:
		case <-r.Context().Done():
			return // the caller gave up (its worker stopped): never reaches the module
		}
	}
	g.next.ServeHTTP(w, r)
}
