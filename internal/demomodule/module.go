package demomodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/tool"
)

// HeaderIdempotencyKey is the request header that de-duplicates calls.
const HeaderIdempotencyKey = "Idempotency-Key"

// Names lists the demo modules, sorted.
func Names() []string { return []string{"currency", "text", "timezone", "units"} }

// Call is one POST /execute the module received.
type Call struct {
	ToolName       string         `json:"tool_name"`
	Arguments      map[string]any `json:"arguments"`
	UserID         string         `json:"user_id,omitempty"`
	IdempotencyKey string         `json:"idempotencyKey,omitempty"`
	// Replayed is true when the key was seen before and the first result
	// was returned without running the tool.
	Replayed bool      `json:"replayed"`
	At       time.Time `json:"at"`
}

// toolFunc runs a tool; a returned error becomes {success:false, error}.
type toolFunc func(args map[string]any) (any, error)

type entry struct {
	manifest tool.Manifest
	run      toolFunc
}

// Module is one demo module: an http.Handler serving GET /manifest and
// POST /execute. It is safe for concurrent use.
type Module struct {
	name  string
	tools map[string]entry
	now   func() time.Time

	mu      sync.Mutex
	calls   []Call
	results map[string][]byte // idempotency key → first response body
	delay   time.Duration
	fail    map[string]int // tool → HTTP status to answer with
}

// New returns the demo module of that name (see Names). Its tools are the
// demo catalogue's manifests of that module that it implements (so the
// module and the catalogue can never disagree on a schema), plus text.stats,
// which only the module describes.
func New(name string) (*Module, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("demomodule: unknown module %q (have %s)", name, strings.Join(Names(), ", "))
	}
	m := &Module{name: name, tools: map[string]entry{}, now: time.Now, results: map[string][]byte{}, fail: map[string]int{}}
	impls := map[string]toolFunc{
		"currency.convert":         convertCurrency,
		"currency.rates":           exchangeRates,
		"currency.list_currencies": listCurrencies,
		"units.convert":            convertUnits,
		"units.calculate":          calculate,
		"timezone.convert_time":    convertTime,
		"timezone.world_clock":     m.worldClock,
		"text.stats":               textStats,
	}
	manifests, err := catalogue()
	if err != nil {
		return nil, fmt.Errorf("demomodule: %w", err)
	}
	if name == "text" {
		manifests = append(slices.Clip(manifests), textManifest())
	}
	for _, man := range manifests {
		if run, ok := impls[man.ToolID]; ok && man.Module == name {
			m.tools[man.ToolID] = entry{manifest: man, run: run}
		}
	}
	if len(m.tools) == 0 {
		return nil, fmt.Errorf("demomodule: the demo catalogue has no tool of module %q", name)
	}
	return m, nil
}

// catalogue parses the embedded demo catalogue once per process: it is
// immutable, and parsing validates ~100 manifests.
var catalogue = sync.OnceValues(demo.Manifests)

// SetClock replaces the clock timezone.world_clock reads (for tests).
func (m *Module) SetClock(now func() time.Time) {
	m.mu.Lock()
	m.now = now
	m.mu.Unlock()
}

// Name returns the module name.
func (m *Module) Name() string { return m.name }

// Manifests returns the Toolsmith manifests of the module's tools, sorted by id.
func (m *Module) Manifests() []tool.Manifest {
	ids := make([]string, 0, len(m.tools))
	for id := range m.tools {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]tool.Manifest, 0, len(ids))
	for _, id := range ids {
		out = append(out, m.tools[id].manifest)
	}
	return out
}

// Calls returns a copy of every call received, oldest first.
func (m *Module) Calls() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// Executions counts the calls that actually ran a tool (replays excluded),
// optionally only those with the given idempotency key ("" = all).
func (m *Module) Executions(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		if !c.Replayed && (key == "" || c.IdempotencyKey == key) {
			n++
		}
	}
	return n
}

// SetDelay makes every POST /execute wait d before answering (for timeout
// and worker-restart tests). The wait ends early when the client goes away.
func (m *Module) SetDelay(d time.Duration) {
	m.mu.Lock()
	m.delay = d
	m.mu.Unlock()
}

// FailWith makes calls to toolName answer with an HTTP status (0 clears it).
func (m *Module) FailWith(toolName string, status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if status == 0 {
		delete(m.fail, toolName)
		return
	}
	m.fail[toolName] = status
}

// ServeHTTP serves GET /manifest and POST /execute.
func (m *Module) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/manifest" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"name": m.name, "tools": m.Manifests()})
	case r.URL.Path == "/execute" && r.Method == http.MethodPost:
		m.execute(w, r)
	case r.URL.Path == "/manifest" || r.URL.Path == "/execute":
		w.Header().Set("Allow", map[bool]string{true: "GET", false: "POST"}[r.URL.Path == "/manifest"])
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

type executeRequest struct {
	ToolName  string         `json:"tool_name"`
	Arguments map[string]any `json:"arguments"`
	UserID    string         `json:"user_id"`
}

type executeResponse struct {
	ToolName string `json:"tool_name"`
	Success  bool   `json:"success"`
	Result   any    `json:"result,omitempty"`
	Error    string `json:"error,omitempty"`
}

func (m *Module) execute(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	var req executeRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, "invalid JSON body: "+err.Error(), http.StatusBadRequest)
		return
	}
	key := r.Header.Get(HeaderIdempotencyKey)

	m.mu.Lock()
	delay, status := m.delay, m.fail[req.ToolName]
	m.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}

	// The lock is held while the tool runs so that two concurrent calls with
	// one key cannot both execute; the demo tools are pure and fast.
	m.mu.Lock()
	defer m.mu.Unlock()
	call := Call{ToolName: req.ToolName, Arguments: req.Arguments, UserID: req.UserID, IdempotencyKey: key, At: m.now()}
	if prev, ok := m.results[key]; ok && key != "" {
		call.Replayed = true
		m.calls = append(m.calls, call)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Idempotent-Replayed", "true")
		_, _ = w.Write(prev)
		return
	}
	m.calls = append(m.calls, call)
	if status != 0 {
		http.Error(w, fmt.Sprintf("demo failure injected for %s", req.ToolName), status)
		return
	}
	resp := executeResponse{ToolName: req.ToolName}
	if t, ok := m.tools[req.ToolName]; !ok {
		resp.Error = fmt.Sprintf("unknown tool %q in module %s", req.ToolName, m.name)
	} else if out, err := t.run(normalizeNumbers(req.Arguments)); err != nil {
		resp.Error = err.Error()
	} else {
		resp.Success, resp.Result = true, out
	}
	b, err := json.Marshal(resp)
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		// A result out of JSON's range (a conversion overflowing to
		// +Inf) comes from inputs out of range: the caller's to fix, so a
		// 422 a retry cannot change, not a 500.
		resp = executeResponse{ToolName: req.ToolName, Error: fmt.Sprintf("inputs out of range: the result of %s is not a finite number (%s)", req.ToolName, unsupported.Str)}
		b, err = json.Marshal(resp)
		if err == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write(b)
			return
		}
	}
	if err != nil {
		http.Error(w, "encode result: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if key != "" {
		m.results[key] = b
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// normalizeNumbers turns json.Number values into float64 (integers too) so
// tools read every number the same way.
func normalizeNumbers(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				out[k] = f
				continue
			}
		}
		out[k] = v
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Mux serves every demo module under its own path prefix ("/currency/manifest",
// "/units/execute", …) so one listener can host them all; configure each as
// NAME=http://host:port/NAME. It returns the modules by name for inspection.
func Mux() (*http.ServeMux, map[string]*Module) {
	mux := http.NewServeMux()
	mods := map[string]*Module{}
	for _, n := range Names() {
		m, err := New(n)
		if err != nil {
			panic(err) // Names and New agree; this cannot happen.
		}
		mods[n] = m
		mux.Handle("/"+n+"/", http.StripPrefix("/"+n, m))
	}
	return mux, mods
}
