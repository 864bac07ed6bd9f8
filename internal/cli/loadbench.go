package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/evaluation"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/tool"
)

// newLoadBenchCommand is `toolsmith bench`: it starts the whole system in
// this process on a fresh data dir (the dev wiring: SQLite, the embedder,
// in-process Temporal, the demo modules), loads N tools through the HTTP
// API, and measures registration, search latency (never-seen and repeated
// queries, per strategy, one client and several), substitute fulfilment
// through Temporal, resident memory after each phase and restart-to-ready
// time. One table, then (--json) one JSON object as the last line.
func newLoadBenchCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "bench", Args: exactArgs(0, "no arguments")}
	n := c.Flags().Int("tools", 10000, "how many tools to load")
	specs := c.Flags().String("openapi", "", "a folder of OpenAPI specs whose operations become the tools")
	toolsFile := c.Flags().String("tools-file", "", "a tools file in the eval format (tools.jsonl) instead of --openapi")
	queries := c.Flags().Int("queries", 300, "never-seen queries per strategy and client count")
	clients := c.Flags().Int("concurrency", 8, "clients of the concurrent phases")
	asJSON := c.Flags().Bool("json", false, "print a JSON summary object as the last line")
	dataDir := c.Flags().String("data-dir", "", "data dir of the benchmarked system (default: a new temporary one, removed afterwards)")
	embedder := c.Flags().String("embedder", config.EmbedderUSELite, "embedder of the benchmarked system: use-lite or hashing")
	modelDir := c.Flags().String("model-dir", "", "USE-Lite weights (default TOOLSMITH_MODEL_DIR, then <data-dir>/models/use-lite-0.2.0)")
	profile := c.Flags().String("profile", "", "write pprof profiles to this folder: CPU of the registration, of the search phases and of the restart with its first search, heap after the searches and after the restart")
	memLimit := c.Flags().Int64("memory-limit", 0, "the benchmarked system's --memory-limit in bytes (0: its default; 100,000 tools need about 1 GiB)")
	events := c.Flags().Int("usage-events", 0, "usage events to record after the registration (queries paraphrasing the tools' descriptions, Zipf-skewed over the tools)")
	c.RunE = func(c *cobra.Command, _ []string) error {
		switch {
		case *n <= 0:
			return fmt.Errorf("bench: --tools must be > 0, got %d: %w", *n, config.ErrInvalid)
		case *queries <= 0:
			return fmt.Errorf("bench: --queries must be > 0, got %d: %w", *queries, config.ErrInvalid)
		case *memLimit < 0:
			return fmt.Errorf("bench: --memory-limit must be >= 0, got %d: %w", *memLimit, config.ErrInvalid)
		case *events < 0:
			return fmt.Errorf("bench: --usage-events must be >= 0, got %d: %w", *events, config.ErrInvalid)
		case *clients <= 0:
			return fmt.Errorf("bench: --concurrency must be > 0, got %d: %w", *clients, config.ErrInvalid)
		case (*specs == "") == (*toolsFile == ""):
			return fmt.Errorf("bench: give exactly one of --openapi DIR and --tools-file F: %w", config.ErrInvalid)
		case *embedder != config.EmbedderUSELite && *embedder != "hashing":
			return fmt.Errorf("bench: --embedder must be use-lite or hashing, got %q: %w", *embedder, config.ErrInvalid)
		}
		b := &bench{e: e, n: *n, queries: *queries, clients: *clients, embedder: *embedder, modelDir: *modelDir, profile: *profile, events: *events, memLimit: *memLimit}
		if b.profile != "" {
			if err := os.MkdirAll(b.profile, 0o755); err != nil {
				return fmt.Errorf("bench: --profile: %w", err)
			}
		}
		if b.modelDir == "" {
			if d, ok := e.lookupEnv("TOOLSMITH_MODEL_DIR"); ok {
				b.modelDir = d
			}
		}
		var err error
		if *specs != "" {
			b.catalogue, b.spare, err = manifestsFromSpecs(*specs, *n)
		} else {
			b.catalogue, b.spare, err = manifestsFromToolsFile(*toolsFile, *n)
		}
		if err != nil {
			return err
		}
		b.source = len(b.catalogue)
		if len(b.catalogue) < *n && len(b.catalogue) > 0 {
			// Variants of the source's tools make up the count; a share of
			// the source stays out (with no variants) for never-seen queries.
			var held []string
			b.catalogue, held = holdOut(b.catalogue, holdOutEvery)
			b.spare = append(held, b.spare...)
			b.catalogue = expandCatalogue(b.catalogue, *n)
			fmt.Fprintf(e.stderr, "bench: the source holds %d tools, fewer than --tools %d: %d held out for never-seen queries, the rest and %d variants of them (versions, regional copies, paraphrases) loaded\n",
				b.source, *n, len(held), len(b.catalogue)-(b.source-len(held)))
		}
		b.dir = *dataDir
		if b.dir == "" {
			if b.dir, err = os.MkdirTemp("", "toolsmith-bench-*"); err != nil {
				return err
			}
			defer os.RemoveAll(b.dir)
		}
		rep, err := b.run(c.Context())
		if err != nil {
			return err
		}
		rep.print(e.stdout)
		if *asJSON {
			js, _ := json.Marshal(rep)
			fmt.Fprintln(e.stdout, string(js))
		}
		return nil
	}
	return c
}

type bench struct {
	e                  *env
	n, queries         int
	clients            int
	embedder, modelDir string
	dir                string
	profile            string // folder for pprof profiles, "" for none
	events             int    // usage events to record after the registration
	memLimit           int64  // the system's --memory-limit, 0 for its default
	source             int    // tools in the source, before variants
	catalogue          []tool.Manifest
	spare              []string // texts of tools not loaded: never-seen queries
	base, auth         string
	cancel             context.CancelFunc
	done               chan int
}

// latency is a phase's figures.
type latency struct {
	N       int     `json:"n"`
	P50     float64 `json:"p50Ms"`
	P95     float64 `json:"p95Ms"`
	P99     float64 `json:"p99Ms"`
	PerSec  float64 `json:"perSecond"`
	Clients int     `json:"clients"`
	Errors  int     `json:"errors"`
	// FirstError is the first failed call's error, "" when none failed.
	FirstError string `json:"firstError,omitempty"`
}

// benchReport is the run's outcome.
type benchReport struct {
	Tools          int     `json:"tools"`
	SourceTools    int     `json:"sourceTools"`
	UsageEvents    int     `json:"usageEvents"`
	UsagePerSec    float64 `json:"usageEventsPerSecond,omitempty"`
	Embedder       string  `json:"embedder"`
	RegisterPerSec float64 `json:"registerPerSecond"`
	RegisterErrors int     `json:"registerErrors"`
	// SlowestBatchSeconds is the longest batch-register call (100 tools).
	SlowestBatchSeconds float64            `json:"slowestBatchSeconds"`
	Search              map[string]latency `json:"search"`
	Substitute          latency            `json:"substitute"`
	RSSMB               map[string]float64 `json:"rssMB"`
	// SteadyMB is the resident set once the server has handed the phase's
	// freed pages back (its next memory trim), 3 to 12 seconds after the
	// phase, with no requests in between.
	SteadyMB map[string]float64 `json:"rssSteadyMB"`
	// AnonMB is the anonymous part of the resident set (the rest is the
	// executable's file-backed pages, which the kernel can drop and reread).
	AnonMB map[string]float64 `json:"rssAnonMB"`
	// GoHeapMB is the Go heap's live objects after a collection, per phase:
	// what the process holds, as opposed to what the OS has not taken back.
	GoHeapMB map[string]float64 `json:"goHeapMB"`
	// GoMappedMB is the memory the Go runtime holds from the OS (mapped and
	// not released) per phase; the resident set beyond it is outside Go
	// (SQLite's page caches).
	GoMappedMB     map[string]float64 `json:"goMappedMB"`
	StartSeconds   float64            `json:"startToReadySeconds"`
	RestartSeconds float64            `json:"restartToReadySeconds"`
	FirstSearchMs  float64            `json:"firstSearchAfterRestartMs"`
	Cores          int                `json:"cores"`
	phases         []string
}

func (b *bench) run(ctx context.Context) (*benchReport, error) {
	rep := &benchReport{Tools: len(b.catalogue), SourceTools: b.source, UsageEvents: b.events, Embedder: b.embedder, Search: map[string]latency{}, RSSMB: map[string]float64{}, AnonMB: map[string]float64{}, SteadyMB: map[string]float64{}, GoHeapMB: map[string]float64{}, GoMappedMB: map[string]float64{}, Cores: runtime.NumCPU()}
	rss := func(phase string) {
		rep.RSSMB[phase] = residentMB("VmRSS:")
		rep.AnonMB[phase] = residentMB("RssAnon:")
		b.awaitTrim(ctx)
		rep.SteadyMB[phase] = residentMB("VmRSS:")
		rep.GoMappedMB[phase] = goMappedMB()
		rep.GoHeapMB[phase] = liveHeapMB()
		rep.phases = append(rep.phases, phase)
	}
	start := time.Now()
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	defer b.stop()
	rep.StartSeconds = time.Since(start).Seconds()
	rss("ready")

	// Registration through batch-register, 100 a call.
	stopProfile := b.cpuProfile("cpu-register.pprof")
	start = time.Now()
	var slowest time.Duration
	for i := 0; i < len(b.catalogue); i += 100 {
		batchStart := time.Now()
		batch := b.catalogue[i:min(i+100, len(b.catalogue))]
		var out struct {
			Results []struct {
				Status string `json:"status"`
			} `json:"results"`
		}
		items := make([]map[string]any, len(batch))
		for j := range batch {
			items[j] = map[string]any{"manifest": batch[j]}
		}
		code, err := b.call(ctx, http.MethodPost, "/api/v1/tools/batch-register", map[string]any{"tools": items, "upsert": true}, &out)
		if err != nil || code >= 300 {
			return nil, fmt.Errorf("bench: batch-register: HTTP %d: %v", code, err)
		}
		for _, r := range out.Results {
			if r.Status != "created" && r.Status != "updated" && r.Status != "unchanged" {
				rep.RegisterErrors++
			}
		}
		slowest = max(slowest, time.Since(batchStart))
		done := i + len(batch)
		if done%1000 == 0 || done == len(b.catalogue) {
			fmt.Fprintf(b.e.stderr, "\rregistered %d/%d (%.0f/s)   ", done, len(b.catalogue), float64(done)/time.Since(start).Seconds())
		}
	}
	fmt.Fprintln(b.e.stderr)
	rep.RegisterPerSec = float64(len(b.catalogue)) / time.Since(start).Seconds()
	rep.SlowestBatchSeconds = slowest.Seconds()
	stopProfile()
	runtime.GC()
	rss("registered")

	// History: usage events through the admin's usage batch, as an import.
	if b.events > 0 {
		evs := usageEvents(b.catalogue, b.events, time.Now())
		start = time.Now()
		for i := 0; i < len(evs); i += usageBatch {
			batch := evs[i:min(i+usageBatch, len(evs))]
			code, err := b.call(ctx, http.MethodPost, "/api/v1/tools/usage/batch", map[string]any{"events": batch}, nil)
			if err != nil || code >= 300 {
				return nil, fmt.Errorf("bench: usage batch: HTTP %d: %v", code, err)
			}
			fmt.Fprintf(b.e.stderr, "\rrecorded %d/%d usage events (%.0f/s)   ", i+len(batch), len(evs), float64(i+len(batch))/time.Since(start).Seconds())
		}
		fmt.Fprintln(b.e.stderr)
		rep.UsagePerSec = float64(len(evs)) / time.Since(start).Seconds()
		rss("used")
	}

	// Search: never-seen queries (each used once), then repeated ones.
	unseen := neverSeen(b.spare, b.catalogue, 2*3*b.queries+1)
	// The client's copy of the catalogue is not needed from here on; it
	// shares the process with the server (at 100,000 tools it was 86 MB
	// of the live heap that the resident figures below counted).
	b.catalogue = nil
	runtime.GC()
	next := 0
	take := func(k int) []string {
		out := unseen[next : next+k]
		next += k
		return out
	}
	stopProfile = b.cpuProfile("cpu-search.pprof")
	for _, strat := range []string{"keyword", "semantic", "hybrid"} {
		rep.Search[strat+"/unseen/1"] = b.searches(ctx, strat, take(b.queries), 1)
		rep.Search[strat+"/unseen/"+strconv.Itoa(b.clients)] = b.searches(ctx, strat, take(b.queries), b.clients)
		rep.Search[strat+"/repeated/1"] = b.searches(ctx, strat, repeatedQueries(unseen[:20], b.queries), 1)
		fmt.Fprintf(b.e.stderr, "searched %s\n", strat)
	}
	stopProfile()
	rss("searched")
	b.heapProfile("heap-searched.pprof")

	// Substitute fulfilment through Temporal.
	body := map[string]any{"verb": "CONVERT_CURRENCY", "description": "convert an amount of money between currencies",
		"inputs": map[string]any{"amount": 100, "from": "USD", "to": "EUR"}}
	if b.embedder == "hashing" {
		body["options"] = map[string]any{"threshold": hashingThreshold}
	}
	rep.Substitute = b.measure(20, 1, func(int) error {
		var run struct {
			Result struct {
				Branch string `json:"branch"`
			} `json:"result"`
		}
		code, err := b.call(ctx, http.MethodPost, "/api/v1/verbs?wait=30s", body, &run)
		if err == nil && (code != http.StatusOK || run.Result.Branch != "substitute") {
			err = fmt.Errorf("HTTP %d branch %q", code, run.Result.Branch)
		}
		return err
	})
	rss("fulfilled")

	// Restart on the same data dir: time to ready, then the first search.
	b.stop()
	runtime.GC()
	stopProfile = b.cpuProfile("cpu-restart.pprof")
	start = time.Now()
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	rep.RestartSeconds = time.Since(start).Seconds()
	first := b.searches(ctx, "hybrid", take(1), 1)
	rep.FirstSearchMs = first.P50
	stopProfile()
	rss("restarted")
	b.heapProfile("heap-restarted.pprof")
	return rep, nil
}

// cpuProfile starts a CPU profile into the profile folder and returns its
// stop; without --profile both do nothing.
func (b *bench) cpuProfile(name string) func() {
	if b.profile == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(b.profile, name))
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(b.e.stderr, "bench: profile %s: %v\n", name, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// heapProfile writes the live heap (after a collection) into the profile
// folder.
func (b *bench) heapProfile(name string) {
	if b.profile == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(filepath.Join(b.profile, name))
	if err == nil {
		err = pprof.WriteHeapProfile(f)
		f.Close()
	}
	if err != nil {
		fmt.Fprintf(b.e.stderr, "bench: profile %s: %v\n", name, err)
	}
}

// start runs dev in this process on the bench's data dir and waits until
// it is ready.
func (b *bench) start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan string, 1)
	var logs bytes.Buffer
	e := &env{stdout: io.Discard, stderr: &syncWriter{w: &logs}, lookupEnv: b.e.lookupEnv, devTemporal: b.e.devTemporal, onReady: func(base string) { ready <- base }}
	args := []string{"dev", "--embedder", b.embedder, "--data-dir", b.dir, "--http-addr", "127.0.0.1:0",
		"--temporal-addr", "127.0.0.1:0", "--ui-addr", "127.0.0.1:0", "--log-level", "error", "--rate-search", "-1", "--rate-verbs", "-1", "--rate-execute", "-1"}
	if b.modelDir != "" {
		args = append(args, "--model-dir", b.modelDir)
	}
	if b.memLimit > 0 {
		args = append(args, "--memory-limit", strconv.FormatInt(b.memLimit, 10))
	}
	b.done, b.cancel = make(chan int, 1), cancel
	go func() { b.done <- run(ctx, args, e) }()
	select {
	case b.base = <-ready:
	case code := <-b.done:
		cancel()
		return fmt.Errorf("bench: the system exited with %d before it was ready:\n%s", code, logs.String())
	case <-time.After(5 * time.Minute):
		cancel()
		return fmt.Errorf("bench: the system was not ready within 5 minutes")
	}
	secret, err := readKeyFile(filepath.Join(b.dir, AdminKeyFile))
	if err != nil {
		return fmt.Errorf("bench: the owner key: %w", err)
	}
	b.auth = "Bearer " + secret
	return nil
}

// Steady memory waits for the server's memory trim: internal/memtrim
// hands freed pages back two seconds after the last burst of work, and at
// most every ten seconds.
const (
	steadyMin = 3 * time.Second
	steadyMax = 12 * time.Second
)

// awaitTrim waits, quietly, until a memory trim has run to its end after
// the call (toolsmith_memory_trims_total grew), at least steadyMin and at
// most steadyMax. Without the metric it waits steadyMin.
func (b *bench) awaitTrim(ctx context.Context) {
	start := time.Now()
	before, err := b.trims(ctx)
	time.Sleep(steadyMin)
	for err == nil && time.Since(start) < steadyMax {
		n, err2 := b.trims(ctx)
		if err2 != nil || n > before {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// trims reads toolsmith_memory_trims_total from the server's /metrics.
func (b *bench) trims(ctx context.Context) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", b.auth)
	resp, err := benchClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "toolsmith_memory_trims_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("GET /metrics: no toolsmith_memory_trims_total")
}

func (b *bench) stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	b.cancel = nil
	select {
	case <-b.done:
	case <-time.After(time.Minute):
	}
}

// benchClient's timeout is generous: a batch of 100 long manifests embeds
// for a while on a small machine, and the bench reports slowness, it does
// not fail on it.
var benchClient = &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func (b *bench) call(ctx context.Context, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		js, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", b.auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := benchClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &env); err == nil && len(env.Data) > 0 {
			_ = json.Unmarshal(env.Data, out)
		}
	}
	return resp.StatusCode, nil
}

// searches runs queries through GET /api/v1/tools/retrieval/search.
func (b *bench) searches(ctx context.Context, strategy string, qs []string, clients int) latency {
	return b.measure(len(qs), clients, func(i int) error {
		code, err := b.call(ctx, http.MethodGet, "/api/v1/tools/retrieval/search?maxTools=5&strategy="+strategy+"&q="+url.QueryEscape(qs[i]), nil, nil)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("HTTP %d", code)
		}
		return err
	})
}

// measure runs n calls on clients goroutines and summarises their latency.
func (b *bench) measure(n, clients int, call func(i int) error) latency {
	lat := make([]float64, n)
	var errs int
	var first string
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan int)
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				t := time.Now()
				err := call(i)
				lat[i] = float64(time.Since(t).Microseconds()) / 1000
				if err != nil {
					mu.Lock()
					if errs == 0 {
						first = err.Error()
					}
					errs++
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	total := time.Since(start).Seconds()
	slices.Sort(lat)
	pct := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))] }
	return latency{N: n, P50: pct(0.5), P95: pct(0.95), P99: pct(0.99), PerSec: float64(n) / total, Clients: clients, Errors: errs, FirstError: first}
}

func (r *benchReport) print(w io.Writer) {
	fmt.Fprintf(w, "toolsmith bench: %d tools (%d from the source), embedder %s, %d cores (client and server in one process)\n", r.Tools, r.SourceTools, r.Embedder, r.Cores)
	if r.UsageEvents > 0 {
		fmt.Fprintf(w, "usage events: %d recorded, %.0f/s\n", r.UsageEvents, r.UsagePerSec)
	}
	fmt.Fprintf(w, "start to ready %.1f s; registration %.1f tools/s (%d refused; slowest batch of 100 %.1f s); restart to ready %.1f s, first search after it %.1f ms\n",
		r.StartSeconds, r.RegisterPerSec, r.RegisterErrors, r.SlowestBatchSeconds, r.RestartSeconds, r.FirstSearchMs)
	fmt.Fprintf(w, "%-22s %6s %8s %8s %8s %9s %6s\n", "search", "n", "p50 ms", "p95 ms", "p99 ms", "req/s", "errors")
	keys := make([]string, 0, len(r.Search))
	for k := range r.Search {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		l := r.Search[k]
		fmt.Fprintf(w, "%-22s %6d %8.1f %8.1f %8.1f %9.1f %6d\n", k, l.N, l.P50, l.P95, l.P99, l.PerSec, l.Errors)
	}
	s := r.Substitute
	fmt.Fprintf(w, "%-22s %6d %8.1f %8.1f %8.1f %9.1f %6d\n", "substitute (Temporal)", s.N, s.P50, s.P95, s.P99, s.PerSec, s.Errors)
	for _, k := range keys {
		if e := r.Search[k].FirstError; e != "" {
			fmt.Fprintf(w, "first error of %s: %s\n", k, e)
		}
	}
	if s.FirstError != "" {
		fmt.Fprintf(w, "first error of the substitutions: %s\n", s.FirstError)
	}
	for i, line := range []struct {
		label string
		mb    map[string]float64
	}{
		{"resident memory MB, at the end of each phase:", r.RSSMB},
		{"steady, after the next memory trim (3-12 s) MB:", r.SteadyMB},
		{"of which anonymous at the end MB:", r.AnonMB},
		{"held by the Go runtime MB:", r.GoMappedMB},
		{"live Go heap MB:", r.GoHeapMB},
	} {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprint(w, line.label)
		for _, p := range r.phases {
			fmt.Fprintf(w, " %s %.0f", p, line.mb[p])
		}
	}
	fmt.Fprintln(w)
}

// goMappedMB is the memory the Go runtime has mapped and not released.
func goMappedMB() float64 {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(samples)
	return float64(samples[0].Value.Uint64()-samples[1].Value.Uint64()) / (1 << 20)
}

// liveHeapMB collects garbage and returns the bytes of live heap objects.
func liveHeapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// residentMB reads a field of /proc/self/status (VmRSS:, RssAnon:), or the Go runtime's
// view of its memory where /proc is missing.
func residentMB(field string) float64 {
	if raw, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.Sys) / (1 << 20)
}

// manifestsFromSpecs turns the operations of every spec under dir into
// manifests, until n; the operations beyond n keep their summaries as
// never-seen query texts.
func manifestsFromSpecs(dir string, n int) ([]tool.Manifest, []string, error) {
	files, err := airlock.SpecFiles(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: --openapi %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("bench: --openapi %s holds no .json/.yaml specs: %w", dir, config.ErrInvalid)
	}
	var out []tool.Manifest
	var spare []string
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		nd, err := codegen.Normalise(context.Background(), data)
		if err != nil {
			continue
		}
		slug := airlock.Slug(nd.Doc, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
		for _, t := range kit.Operations(nd.Doc) {
			desc := strings.TrimSpace(t.Summary)
			if len(out) >= n {
				if desc != "" {
					spare = append(spare, desc)
				}
				continue
			}
			id := slug + "." + t.Name
			if seen[id] {
				continue
			}
			m := tool.Manifest{ToolID: id, Verb: strings.ToUpper(t.Name), Name: t.Name, Category: "api",
				Description: desc, PermissionsRequired: []string{"public"}}
			if m.Description == "" {
				m.Description = fmt.Sprintf("Calls %s %s of %s.", t.Method, t.Path, slug)
			}
			if in, err := kit.InputSchema(nd.Doc, t); err == nil {
				m.InputSchema = codegen.ToJSONSchema(in)
			}
			tool.Normalize(&m)
			if tool.Validate(&m) != nil {
				continue
			}
			seen[id] = true
			out = append(out, m)
		}
		if len(out) >= n && len(spare) >= 2000 {
			break
		}
	}
	return out, spare, nil
}

// manifestsFromToolsFile reads an eval-format tools file.
func manifestsFromToolsFile(path string, n int) ([]tool.Manifest, []string, error) {
	recs, err := evaluation.ReadTools(path)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: --tools-file: %w", err)
	}
	var out []tool.Manifest
	var spare []string
	for _, r := range recs {
		if len(out) >= n {
			spare = append(spare, r.Description)
			continue
		}
		m := evaluation.Manifest(r)
		m.Verb = strings.ToUpper(strings.ReplaceAll(tool.VerbWords(strings.ReplaceAll(evaluation.Words(r.ID), " ", "_")), " ", "_"))
		tool.Normalize(&m)
		if tool.Validate(&m) == nil {
			out = append(out, m)
		}
	}
	return out, spare, nil
}

// holdOutEvery: when variants make up the count, every holdOutEvery-th
// source tool is left out, and its text is a never-seen query.
const holdOutEvery = 25

// usageBatch is the events per usage batch call (retrieval.MaxEvents, an
// admin's import).
const usageBatch = 5000

// holdOut splits the catalogue: every k-th tool's description is returned
// as a query text, the others are kept.
func holdOut(ms []tool.Manifest, k int) ([]tool.Manifest, []string) {
	if len(ms) < 2*k {
		return ms, nil
	}
	kept := make([]tool.Manifest, 0, len(ms))
	var held []string
	for i, m := range ms {
		if i%k == k-1 {
			held = append(held, m.Description)
			continue
		}
		kept = append(kept, m)
	}
	return kept, held
}

// neverSeen returns k distinct query texts no search has sent: the texts of
// tools not loaded first, then phrases made from the loaded tools' words
// (seeded, so runs compare), each used once.
func neverSeen(spare []string, loaded []tool.Manifest, k int) []string {
	out := make([]string, 0, k)
	used := map[string]bool{}
	for _, s := range spare {
		if len(out) == k {
			return out
		}
		if s = strings.TrimSpace(s); s != "" && !used[s] {
			used[s] = true
			out = append(out, s)
		}
	}
	var words []string
	for _, m := range loaded {
		words = append(words, strings.Fields(strings.ToLower(m.Description))...)
	}
	if len(words) == 0 {
		words = []string{"convert", "list", "find", "create", "report", "weather", "currency", "user"}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for len(out) < k {
		q := fmt.Sprintf("%s %s %s %s", words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))])
		if !used[q] {
			used[q] = true
			out = append(out, q)
		}
	}
	return out
}

// repeatedQueries cycles through a few queries: after the first pass every
// search is answered from the result cache.
func repeatedQueries(base []string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = base[i%len(base)]
	}
	return out
}

// syncWriter serialises writes (the benchmarked system logs from several
// goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
