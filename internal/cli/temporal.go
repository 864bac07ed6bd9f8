package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api"
	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	apibuilds "github.com/toolsmith/toolsmith/api/builds"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/api/ranking"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/internal/temporallog"
	"github.com/toolsmith/toolsmith/llm"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/web"
	"github.com/toolsmith/toolsmith/worker"
	"github.com/toolsmith/toolsmith/workflows"
)

// hashingThreshold is the substitution threshold calibrated for the hashing
// embedder (workflows/CALIBRATION.md), which decides on similarity alone;
// USE-Lite uses retrieval.DefaultSubstituteRule.
const hashingThreshold = 0.30

// substituteRule is the configured embedder's substitution rule, with
// --substitute-threshold as its similarity bar when set (for USE-Lite, a
// bar on top of the decision model's confidence).
func substituteRule(cfg config.Config) retrieval.SubstituteRule {
	r := retrieval.DefaultSubstituteRule()
	if cfg.Embedder == config.EmbedderHashing {
		r = retrieval.SubstituteRule{Threshold: hashingThreshold}
	}
	if cfg.SubstituteThreshold > 0 {
		r.Threshold = cfg.SubstituteThreshold
	}
	return r
}

// DevTemporal is the in-process Temporal server `toolsmith dev` runs on
// (internal/temporalserver, reached through devtemporal.Start in
// cmd/toolsmith only, so that the production binary does not link it).
type DevTemporal interface {
	// Addr is the frontend's host:port.
	Addr() string
	// Namespace is the namespace the server was started with.
	Namespace() string
	// UIURL is the Web UI's base URL, empty without a UI.
	UIURL() string
	// Stop stops the UI and the server.
	Stop()
}

// DevTemporalStarter starts the in-process Temporal server on cfg's
// addresses and data dir and dials a client of it. A binary built without
// one has no dev or bench command.
type DevTemporalStarter func(ctx context.Context, cfg config.Config, log *slog.Logger, mh client.MetricsHandler) (DevTemporal, client.Client, error)

// dialTemporal connects to an external Temporal cluster (api, worker).
func dialTemporal(ctx context.Context, cfg config.Config, log *slog.Logger, mh client.MetricsHandler) (client.Client, error) {
	opts := client.Options{HostPort: cfg.Temporal.Addr, Namespace: cfg.Temporal.Namespace, Logger: temporallog.Quiet(log), MetricsHandler: mh}
	if cfg.Temporal.TLSCert != "" || cfg.Temporal.TLSCA != "" || cfg.Temporal.TLSServerName != "" {
		tc, err := temporalTLS(cfg.Temporal)
		if err != nil {
			return nil, err
		}
		opts.ConnectionOptions.TLS = tc
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("dial Temporal at --temporal-addr %s (namespace %s): %w", cfg.Temporal.Addr, cfg.Temporal.Namespace, err)
	}
	return c, nil
}

func temporalTLS(t config.Temporal) (*tls.Config, error) {
	tc := &tls.Config{ServerName: t.TLSServerName, MinVersion: tls.VersionTLS12}
	if t.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(t.TLSCert, t.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("--temporal-tls-cert/--temporal-tls-key: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if t.TLSCA != "" {
		pem, err := os.ReadFile(t.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("--temporal-tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--temporal-tls-ca %s: no PEM certificate found: %w", t.TLSCA, config.ErrInvalid)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// moduleConfig builds the module routing table from --module/--modules,
// --modules-file and --slow-modules, plus extra entries (dev's demo modules)
// for names the user did not configure.
func moduleConfig(cfg config.Config, extra map[string]string) (modules.Config, error) {
	mc := modules.NewConfig()
	if cfg.ModulesFile != "" {
		if err := mc.LoadFile(cfg.ModulesFile); err != nil {
			return mc, fmt.Errorf("--modules-file %s: %w: %w", cfg.ModulesFile, config.ErrInvalid, err)
		}
	}
	for _, pair := range cfg.Modules {
		if err := mc.Add(pair); err != nil {
			return mc, fmt.Errorf("--module %q: %w: %w", pair, config.ErrInvalid, err)
		}
	}
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !slices.Contains(mc.Names(), n) {
			if err := mc.Add(n + "=" + extra[n]); err != nil {
				return mc, err
			}
		}
	}
	mc.SetSlow(cfg.SlowModules)
	if err := mc.Validate(); err != nil {
		return mc, fmt.Errorf("modules: %w: %w", config.ErrInvalid, err)
	}
	return mc, nil
}

// serveDemoModules serves the demo modules (currency, units, timezone,
// text) on a loopback port and returns their routing entries and the
// server. They compute for real; the currency rates are a fixed, labelled
// demo table.
func serveDemoModules() (map[string]string, *http.Server, net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("demo modules: %w", err)
	}
	mux, _ := demomodule.Mux()
	entries := map[string]string{}
	for _, n := range demomodule.Names() {
		entries[n] = "http://" + ln.Addr().String() + "/" + n
	}
	return entries, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln, nil
}

// fulfilment is the Temporal side of a process: the client, the worker and
// the routes that start workflows.
type fulfilment struct {
	client    client.Client
	worker    sdkworker.Worker
	verbs     *verbs.Handler
	analytics *apianalytics.Handler
	gaps      fulfil.BuildStore
	ranking   *ranking.Handlers // nil without a retrain service
	mcp       *mcp.Edge
	console   *web.Console
	uiURL     string
	namespace string
	airlock   *airlockParts
	// sampler writes the dashboard's time series once a minute.
	sampler *analytics.Sampler
}

// loadGate holds back the tool changes that arrive while a catalogue
// loads, and applies them once it has: the load read each tool once, maybe
// before its change, and the replay reads it again.
type loadGate struct {
	mu      sync.Mutex
	loading bool
	pending []string
	apply   func(id string)
}

// changed applies a change now, or after the load.
func (g *loadGate) changed(id string) {
	g.mu.Lock()
	if g.loading {
		g.pending = append(g.pending, id)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	g.apply(id)
}

// done ends the load and applies the changes held back, in order.
func (g *loadGate) done() {
	g.mu.Lock()
	g.loading = false
	replay := g.pending
	g.pending = nil
	g.mu.Unlock()
	for _, id := range replay {
		g.apply(id)
	}
}

// handlers are the routes outside /api/v1: the MCP endpoint, whose
// catalogue of tools is loaded now and then follows the registry.
func (f *fulfilment) handlers(ctx context.Context, sys *system) []api.Handler {
	edge := f.mcp
	changed := func(id string) {
		if err := edge.ToolChanged(context.WithoutCancel(ctx), id); err != nil && !errors.Is(err, mcp.ErrNotExposed) {
			sys.log.Warn("mcp: catalogue not updated", "tool", id, "err", err)
		}
	}
	// The catalogue loads after the start, not before it: at 100,000 tools
	// reading and exposing every manifest takes seconds the API need not
	// wait for (MCP sessions get list_changed as tools appear). Changes
	// during the load are replayed after it, so none is lost or overtaken
	// by the load's older read.
	gate := &loadGate{loading: true, apply: changed}
	sys.onToolChange(gate.changed)
	end := sys.loads.Begin()
	go func() {
		if n, err := edge.LoadCatalogue(ctx); err != nil {
			sys.log.Warn("mcp: catalogue not loaded", "err", err)
		} else {
			sys.log.Info("mcp: catalogue exposed", "tools", n)
		}
		gate.done()
		end() // the load's garbage is the size of the catalogue: the trim follows
	}()
	f.console = web.New(f.consoleDeps(sys), web.Config{TemporalUI: f.uiURL, Namespace: f.namespace})
	return []api.Handler{
		{Methods: []string{http.MethodGet, http.MethodPost, http.MethodDelete}, Path: "/mcp", Handler: f.mcp.Handler()},
		{Methods: []string{http.MethodGet}, Path: "/ui", Handler: f.console},
		{Methods: []string{http.MethodGet, http.MethodPost}, Path: "/ui/*path", Handler: f.console},
		{Methods: []string{http.MethodGet}, Path: "/favicon.ico", Handler: f.console},
	}
}

// consoleDeps are the domain services the console calls: the API's own,
// behind the API's authorization table (api.Gate).
func (f *fulfilment) consoleDeps(sys *system) web.Deps {
	var rec api.Recorder
	if sys.audit != nil {
		rec = sys.audit
	}
	d := web.Deps{Sessions: sys.store, Auth: sys.auth, Keys: sys.keys, Gate: api.NewGate(nil, rec, sys.limiter), Audit: sys.audit,
		Registry: sys.registry, Retrieval: sys.retrieval, Store: sys.store, Runs: verbs.Runs{Temporal: f.client, Namespace: f.namespace},
		Models: sys.retrain, Logger: sys.log, Proxies: sys.proxies}
	if f.airlock != nil {
		d.Reviews, d.Notes, d.Enabler = f.airlock.review, f.airlock.notes, f.airlock.health
	}
	return d
}

// mounters are the Temporal-backed routes.
func (f *fulfilment) mounters(cfg config.Config) []httpx.Mounter {
	m := []httpx.Mounter{f.verbs, f.analytics}
	if f.ranking != nil {
		m = append(m, f.ranking)
	}
	if f.airlock != nil {
		m = append(m, f.airlock.routes())
	}
	m = append(m, apibuilds.New(&fulfil.Builds{Temporal: f.client, Gaps: f.gaps, TaskQueue: workflows.TaskQueue}))
	return m
}

// newFulfilment builds the worker (all workflows and activities) and the
// verbs routes on a Temporal client. runWorker=false builds only the routes
// (toolsmith api against an external worker).
func newFulfilment(ctx context.Context, cfg config.Config, sys *system, c client.Client, uiURL string, mc modules.Config, runWorker bool) (*fulfilment, error) {
	f := &fulfilment{client: c, uiURL: strings.TrimRight(uiURL, "/"), namespace: cfg.Temporal.Namespace}
	f.gaps = sys.store
	f.analytics = apianalytics.New(sys.store, verbs.Runs{Temporal: c, Namespace: cfg.Temporal.Namespace})
	if sys.sampler != nil {
		f.sampler = sys.sampler.WithRuns(verbs.Runs{Temporal: c, Namespace: cfg.Temporal.Namespace})
	}
	vc := verbs.Config{Namespace: cfg.Temporal.Namespace, UIBaseURL: strings.TrimRight(uiURL, "/"), DefaultRule: substituteRule(cfg)}
	if sys.audit != nil {
		vc.Audit = sys.audit // write-ahead records of each run's start
	}
	f.verbs = verbs.New(c, sys.store, vc)
	if sys.retrain != nil {
		f.ranking = ranking.New(sys.retrain, c, "")
	}
	al, err := newAirlock(ctx, cfg, sys, c, sys.log)
	if err != nil {
		sys.log.Warn("airlock disabled", "err", err)
	}
	f.airlock = al
	model, err := llm.New(llm.Config{Provider: cfg.LLM.Provider, BaseURL: cfg.LLM.URL, Model: cfg.LLM.Model, APIKey: cfg.LLM.APIKey})
	if err != nil {
		return nil, fmt.Errorf("--llm-provider %s: %w: %w", cfg.LLM.Provider, config.ErrInvalid, err)
	}
	docs := sourceDocs{modules: mc.Modules, client: &http.Client{}}
	if al != nil {
		docs.files = al.files
	}
	f.mcp = mcp.New(mcp.Deps{Auth: sys.auth, Retrieval: sys.retrieval, Store: sys.store, Fulfil: f.verbs.Service(), Sources: docs,
		LLM: model, Audit: sys.audit, Metrics: sys.metrics, Limiter: sys.limiter, Proxies: sys.proxies, Version: version, Log: sys.log,
		MaxBodyBytes: sys.cfg.Auth.MaxBodyBytes}) // --max-body-bytes bounds MCP's bodies as the API's
	if !runWorker {
		return f, nil
	}
	router := modules.NewRouter(mc, modules.WithRegistrar(worker.RegistryRegistrar(sys.registry)),
		modules.WithLogf(func(format string, args ...any) { sys.log.Info(fmt.Sprintf(format, args...)) }))
	deps := worker.Deps{
		Store:    sys.store,
		Searcher: activities.RetrievalSearcher{Service: sys.retrieval},
		Router:   router,
		LLM:      model,
	}
	if sys.registry != nil { // a nil *Service would be a non-nil interface
		deps.Reindexer = sys.registry
	}
	if sys.retrieval != nil { // executions teach the ranking as planners' events do
		deps.Usage = sys.retrieval
	}
	deps.Runs = verbs.Runs{Temporal: c, Namespace: cfg.Temporal.Namespace}
	deps.Retrain = sys.retrain
	sg := activities.StoreGaps{Store: sys.store}
	if sys.retrieval != nil {
		sg.Entities = sys.retrieval.Entities
	}
	deps.Gaps = sg
	if al != nil {
		deps.Airlock, deps.Wrapped = al.activities, al.runtime
	}
	deps.Build = &activities.Build{Model: model, ModelName: cfg.LLM.Provider + "/" + cfg.LLM.Model, TokenBudget: cfg.LLM.BuildTokenBudget,
		WorkDir: filepath.Join(cfg.DataDir, "builds"), Gaps: sys.store}
	if al != nil && sys.registry != nil {
		deps.Build.Files, deps.Build.Registrar = al.files, airlock.RegistryRegistrar{Registry: sys.registry}
	}
	f.worker = worker.New(c, deps)
	return f, nil
}

// start runs the worker and makes sure the module discovery schedule
// exists; it also runs one discovery now so configured modules' tools are
// registered without waiting for the first tick.
func (f *fulfilment) start(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	if f.sampler != nil {
		// Every process counts its own searches; those running a worker
		// also sample the shared state (open gaps, fulfilments), splitting
		// it through the store so several workers count it once.
		f.sampler.SampleShared(f.worker != nil)
		go f.sampler.Run(ctx, time.Minute, func(err error) { log.Warn("dashboard series not written", "err", err) })
	}
	if f.worker == nil {
		return nil
	}
	if err := f.worker.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	if err := verbs.EnsureRefreshSchedule(ctx, f.client, cfg.ModuleRefresh, ""); err != nil {
		return fmt.Errorf("module discovery schedule: %w", err)
	}
	if f.airlock != nil {
		if err := ensureScanSchedule(ctx, f.client, cfg); err != nil {
			return fmt.Errorf("source scan schedule: %w", err)
		}
	}
	err := verbs.EnsureIntervalSchedule(ctx, f.client, AnalyticsScheduleID, cfg.AnalyticsEvery, &client.ScheduleWorkflowAction{
		ID: "analytics-scheduled", Workflow: workflows.AnalyticsWorkflow, TaskQueue: workflows.TaskQueue,
		Args: []any{workflows.AnalyticsInput{}},
	})
	if err != nil {
		return fmt.Errorf("analytics schedule: %w", err)
	}
	// The ranking retrains on the analytics' cadence, on a schedule of
	// its own (a retrain failing does not fail the analytics, nor the
	// other way round).
	if err := ranking.EnsureRetrainSchedule(ctx, f.client, cfg.AnalyticsEvery, ""); err != nil {
		return fmt.Errorf("ranking retrain schedule: %w", err)
	}
	_, err = f.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "toolsmith-modules-refresh-startup", TaskQueue: workflows.TaskQueue,
	}, workflows.RefreshModulesWorkflow)
	if err != nil {
		log.Warn("start-up module discovery not started", "err", err)
	}
	return nil
}

// AnalyticsScheduleID is the schedule of the analytics workflow
// (--analytics-every, daily by default).
const AnalyticsScheduleID = "toolsmith-analytics"

func (f *fulfilment) stop() {
	if f.worker != nil {
		f.worker.Stop()
	}
	f.client.Close()
}
