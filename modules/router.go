package modules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/tool"
)

// HeaderIdempotencyKey carries a call's idempotency key to the module, which
// returns its first result again for a repeated key.
const HeaderIdempotencyKey = "Idempotency-Key"

// maxResponseBytes bounds a module response.
const maxResponseBytes = 8 << 20

// Kind classifies a failed Result so callers can decide what to retry.
type Kind string

// Failure kinds of a Result; "" on success.
const (
	KindInvalidName   Kind = "invalid_name"   // not "module.tool"
	KindUnknownModule Kind = "unknown_module" // module not configured
	KindInvalidInput  Kind = "invalid_input"  // arguments break the inputSchema
	KindHTTP          Kind = "http_error"     // module answered non-200
	KindTimeout       Kind = "timeout"        // no answer within the module timeout
	KindNetwork       Kind = "network_error"  // connection refused, DNS, reset, …
	KindCanceled      Kind = "canceled"       // the caller's context ended first
	KindBadResponse   Kind = "bad_response"   // 200 but not a module ToolResult
	KindToolError     Kind = "tool_error"     // the module reported success=false
	KindInvalidOutput Kind = "invalid_output" // result breaks the outputSchema
)

// Retryable reports whether a failure of this kind may succeed if the same
// call is made again (with the same idempotency key).
func (k Kind) Retryable() bool {
	switch k {
	case KindTimeout, KindNetwork:
		return true
	}
	return false
}

// Call is one tool execution request.
type Call struct {
	// ToolName is "module.tool".
	ToolName  string         `json:"tool_name"`
	Arguments map[string]any `json:"arguments"`
	UserID    string         `json:"user_id,omitempty"`
	// IdempotencyKey, when set, is sent as the Idempotency-Key header.
	IdempotencyKey string `json:"-"`
	// InputSchema and OutputSchema, when set, validate the arguments before
	// the call and the result after it.
	InputSchema  json.RawMessage `json:"-"`
	OutputSchema json.RawMessage `json:"-"`
}

// Result is a module's ToolResult plus the failure's Kind and HTTP status.
type Result struct {
	ToolName string          `json:"tool_name"`
	Success  bool            `json:"success"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Kind     Kind            `json:"kind,omitempty"`
	Status   int             `json:"status,omitempty"`
	Module   string          `json:"module,omitempty"`
	// Duration is how long the HTTP call took (0 when none was made).
	Duration time.Duration `json:"duration,omitempty"`
}

func failed(name string, kind Kind, format string, args ...any) Result {
	return Result{ToolName: name, Success: false, Kind: kind, Error: fmt.Sprintf(format, args...)}
}

// Router routes calls to modules and discovers their tools. It is safe for
// concurrent use; build one per process.
type Router struct {
	cfg       Config
	client    *http.Client
	registrar Registrar
	schemas   schemaCache
	logf      func(format string, args ...any)

	// served holds, per module, the tool ids its last manifest listed
	// (FetchManifest); a module not fetched yet has no entry.
	servedMu sync.RWMutex
	served   map[string]map[string]bool
}

// Serves reports whether this router can run a tool: its module is
// configured and, once the module's manifest has been fetched (a
// discovery), lists the tool. Before any fetch every tool of a configured
// module is taken as served (execution finds out).
func (r *Router) Serves(module, toolID string) bool {
	if _, ok := r.cfg.Modules[module]; !ok {
		return false
	}
	r.servedMu.RLock()
	defer r.servedMu.RUnlock()
	tools, fetched := r.served[module]
	return !fetched || tools[toolID]
}

// remember keeps the tool ids a module's manifest listed (Serves).
func (r *Router) remember(module string, manifests []tool.Manifest) {
	tools := make(map[string]bool, len(manifests))
	for _, m := range manifests {
		tools[m.ToolID] = true
	}
	r.servedMu.Lock()
	defer r.servedMu.Unlock()
	if r.served == nil {
		r.served = map[string]map[string]bool{}
	}
	r.served[module] = tools
}

// Option configures a Router.
type Option func(*Router)

// WithHTTPClient replaces the HTTP client (its Timeout is ignored: each call
// gets its module's timeout).
func WithHTTPClient(c *http.Client) Option { return func(r *Router) { r.client = c } }

// WithRegistrar sets where Discover registers the tools it finds.
func WithRegistrar(reg Registrar) Option { return func(r *Router) { r.registrar = reg } }

// WithLogf sets the logger for skipped modules during discovery.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(r *Router) { r.logf = logf }
}

// NewRouter returns a Router over cfg. cfg should have passed Validate.
func NewRouter(cfg Config, opts ...Option) *Router {
	r := &Router{cfg: cfg, client: &http.Client{}, logf: func(string, ...any) {}}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Config returns the router's configuration.
func (r *Router) Config() Config { return r.cfg }

// Split splits "module.tool" on the first dot. ok is false when either part
// is empty.
func Split(toolName string) (module, method string, ok bool) {
	module, method, found := strings.Cut(toolName, ".")
	if !found || module == "" || method == "" {
		return "", "", false
	}
	return module, method, true
}

// ValidateArguments checks arguments against an inputSchema without a cache
// of compiled schemas (for a caller that checks once, before a run); the
// error wraps ErrSchemaMismatch.
func ValidateArguments(schema json.RawMessage, args map[string]any) error {
	var once schemaCache
	return once.validateArgs(schema, args)
}

// ValidateArguments checks arguments against an inputSchema; the error wraps
// ErrSchemaMismatch.
func (r *Router) ValidateArguments(schema json.RawMessage, args map[string]any) error {
	return r.schemas.validateArgs(schema, args)
}

func (c *schemaCache) validateArgs(schema json.RawMessage, args map[string]any) error {
	doc, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%w: arguments are not JSON: %w", ErrSchemaMismatch, err)
	}
	return c.validate(schema, doc)
}

// Execute routes one call and always returns a Result: failures are failed
// Results with fixed messages, never errors. It does not retry.
func (r *Router) Execute(ctx context.Context, call Call) Result {
	name := call.ToolName
	module, _, ok := Split(name)
	if !ok {
		return failed(name, KindInvalidName, "Invalid tool name format: %s. Expected 'module.tool_name'.", name)
	}
	base, known := r.cfg.Modules[module]
	if !known {
		return failed(name, KindUnknownModule, "Unknown module: %s", module)
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	if err := r.ValidateArguments(call.InputSchema, args); err != nil {
		res := failed(name, KindInvalidInput, "Invalid arguments for %s: %v", name, err)
		res.Module = module
		return res
	}
	payload := map[string]any{"tool_name": name, "arguments": args}
	if call.UserID != "" {
		payload["user_id"] = call.UserID
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return failed(name, KindInvalidInput, "Invalid arguments for %s: %v", name, err)
	}

	timeout := r.cfg.TimeoutFor(module)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, base+"/execute", bytes.NewReader(body))
	if err != nil {
		res := failed(name, KindNetwork, "Tool execution error: %v", err)
		res.Module = module
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if call.IdempotencyKey != "" {
		req.Header.Set(HeaderIdempotencyKey, call.IdempotencyKey)
	}
	start := time.Now()
	resp, err := r.client.Do(req)
	var raw []byte
	if err == nil {
		raw, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
		_ = resp.Body.Close()
	}
	elapsed := time.Since(start)
	if err != nil {
		var res Result
		switch {
		case ctx.Err() != nil:
			res = failed(name, KindCanceled, "Tool execution canceled: %v", ctx.Err())
		case errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil || isTimeout(err):
			res = failed(name, KindTimeout, "Tool execution timed out (%ss).", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
		default:
			res = failed(name, KindNetwork, "Tool execution error: %v", err)
		}
		res.Module, res.Duration = module, elapsed
		return res
	}
	if resp.StatusCode != http.StatusOK {
		res := failed(name, KindHTTP, "Module returned status %d: %s", resp.StatusCode, excerpt(raw))
		res.Module, res.Status, res.Duration = module, resp.StatusCode, elapsed
		return res
	}
	res := decodeResult(name, raw)
	res.Module, res.Status, res.Duration = module, resp.StatusCode, elapsed
	if res.Success {
		result := res.Result
		if len(result) == 0 {
			result = json.RawMessage("null")
		}
		if err := r.schemas.validate(call.OutputSchema, result); err != nil {
			res.Success, res.Kind = false, KindInvalidOutput
			res.Error = fmt.Sprintf("Invalid result from %s: %v", name, err)
		}
	}
	return res
}

func decodeResult(name string, raw []byte) Result {
	if len(raw) > maxResponseBytes {
		return failed(name, KindBadResponse, "Module response exceeds %d bytes", maxResponseBytes)
	}
	var wire struct {
		ToolName string          `json:"tool_name"`
		Success  *bool           `json:"success"`
		Result   json.RawMessage `json:"result"`
		Error    string          `json:"error"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return failed(name, KindBadResponse, "Module returned an invalid ToolResult: %v: %s", err, excerpt(raw))
	}
	if wire.Success == nil {
		return failed(name, KindBadResponse, "Module returned a ToolResult without \"success\": %s", excerpt(raw))
	}
	if wire.ToolName != "" && wire.ToolName != name {
		return failed(name, KindBadResponse, "Module answered for tool %q, not %q", wire.ToolName, name)
	}
	if !*wire.Success {
		msg := wire.Error
		if msg == "" {
			msg = "tool reported failure without an error message"
		}
		return Result{ToolName: name, Success: false, Kind: KindToolError, Error: msg}
	}
	return Result{ToolName: name, Success: true, Result: wire.Result}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// excerpt returns at most 200 bytes of a body, trimmed, on valid UTF-8.
func excerpt(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
