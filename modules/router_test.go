package modules

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/internal/demomodule"
)

var convertIn = json.RawMessage(`{"type":"object","required":["amount","from","to"],
 "properties":{"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}}}`)
var convertOut = json.RawMessage(`{"type":"object","required":["converted"],"properties":{"converted":{"type":"number"}}}`)

// recorder is a module whose answer the test chooses.
type recorder struct {
	mu      sync.Mutex
	status  int
	body    string
	delay   time.Duration
	headers []http.Header
	bodies  []map[string]any
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	r.bodies = append(r.bodies, m)
	status, body, delay := r.status, r.body, r.delay
	r.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			return
		}
	}
	if status == 0 {
		status = 200
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func routerFor(t *testing.T, h http.Handler, edit func(*Config)) *Router {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := NewConfig()
	if err := cfg.Add("fx=" + srv.URL); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&cfg)
	}
	return NewRouter(cfg)
}

func TestExecuteOutcomes(t *testing.T) {
	okBody := `{"tool_name":"fx.convert","success":true,"result":{"converted":9.5}}`
	cases := []struct {
		name     string
		rec      *recorder
		call     Call
		edit     func(*Config)
		kind     Kind
		msg      string
		contacts int
	}{
		{name: "success", rec: &recorder{body: okBody}, call: Call{ToolName: "fx.convert", Arguments: map[string]any{"amount": 10, "from": "USD", "to": "EUR"}, InputSchema: convertIn, OutputSchema: convertOut}, contacts: 1},
		{name: "invalid name", call: Call{ToolName: "convert"}, kind: KindInvalidName, msg: "Invalid tool name format: convert. Expected 'module.tool_name'."},
		{name: "empty tool part", call: Call{ToolName: "fx."}, kind: KindInvalidName, msg: "Invalid tool name format"},
		{name: "unknown module", call: Call{ToolName: "weather.today"}, kind: KindUnknownModule, msg: "Unknown module: weather"},
		{name: "invalid input", call: Call{ToolName: "fx.convert", Arguments: map[string]any{"amount": "ten", "from": "USD", "to": "EUR"}, InputSchema: convertIn}, kind: KindInvalidInput, msg: "/amount"},
		{name: "http 500 with body excerpt", rec: &recorder{status: 500, body: "Internal Server Error: database down"}, call: Call{ToolName: "fx.convert"}, kind: KindHTTP, msg: "Module returned status 500: Internal Server Error: database down", contacts: 1},
		{name: "http 404", rec: &recorder{status: 404, body: strings.Repeat("x", 500)}, call: Call{ToolName: "fx.convert"}, kind: KindHTTP, msg: "Module returned status 404: " + strings.Repeat("x", 200) + "…", contacts: 1},
		{name: "timeout", rec: &recorder{delay: time.Second, body: okBody}, call: Call{ToolName: "fx.convert"}, edit: func(c *Config) { c.DefaultTimeout = 30 * time.Millisecond }, kind: KindTimeout, msg: "Tool execution timed out (0.03s).", contacts: 1},
		{name: "tool error", rec: &recorder{body: `{"tool_name":"fx.convert","success":false,"error":"rate unavailable"}`}, call: Call{ToolName: "fx.convert"}, kind: KindToolError, msg: "rate unavailable", contacts: 1},
		{name: "not a tool result", rec: &recorder{body: `<html>`}, call: Call{ToolName: "fx.convert"}, kind: KindBadResponse, msg: "invalid ToolResult", contacts: 1},
		{name: "missing success", rec: &recorder{body: `{"result":1}`}, call: Call{ToolName: "fx.convert"}, kind: KindBadResponse, msg: "without \"success\"", contacts: 1},
		{name: "answer for another tool", rec: &recorder{body: `{"tool_name":"fx.other","success":true}`}, call: Call{ToolName: "fx.convert"}, kind: KindBadResponse, msg: "not \"fx.convert\"", contacts: 1},
		{name: "invalid output", rec: &recorder{body: `{"tool_name":"fx.convert","success":true,"result":{"converted":"many"}}`}, call: Call{ToolName: "fx.convert", OutputSchema: convertOut}, kind: KindInvalidOutput, msg: "/converted", contacts: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.rec
			if rec == nil {
				rec = &recorder{}
			}
			r := routerFor(t, rec, tc.edit)
			res := r.Execute(context.Background(), tc.call)
			if res.Kind != tc.kind || res.Success != (tc.kind == "") {
				t.Fatalf("kind %q success %v (error %q), want kind %q", res.Kind, res.Success, res.Error, tc.kind)
			}
			if !strings.Contains(res.Error, tc.msg) {
				t.Fatalf("error %q does not contain %q", res.Error, tc.msg)
			}
			if len(rec.bodies) != tc.contacts {
				t.Fatalf("module contacted %d times, want %d", len(rec.bodies), tc.contacts)
			}
			if res.ToolName != tc.call.ToolName {
				t.Fatalf("tool name %q", res.ToolName)
			}
		})
	}
}

func TestExecuteTimeoutSlowModule(t *testing.T) {
	rec := &recorder{delay: 80 * time.Millisecond, body: `{"tool_name":"fx.convert","success":true}`}
	r := routerFor(t, rec, func(c *Config) {
		c.DefaultTimeout, c.SlowTimeout = 20*time.Millisecond, 2*time.Second
		c.SetSlow("fx")
	})
	if res := r.Execute(context.Background(), Call{ToolName: "fx.convert"}); !res.Success {
		t.Fatalf("slow module got the default timeout: %+v", res)
	}
}

func TestExecuteNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	cfg := NewConfig()
	if err := cfg.Add("fx=" + url); err != nil {
		t.Fatal(err)
	}
	res := NewRouter(cfg).Execute(context.Background(), Call{ToolName: "fx.convert"})
	if res.Kind != KindNetwork || !strings.HasPrefix(res.Error, "Tool execution error: ") || !res.Kind.Retryable() {
		t.Fatalf("result = %+v", res)
	}
}

func TestExecuteCanceled(t *testing.T) {
	rec := &recorder{delay: time.Second}
	r := routerFor(t, rec, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if res := r.Execute(ctx, Call{ToolName: "fx.convert"}); res.Kind != KindCanceled {
		t.Fatalf("result = %+v", res)
	}
}

func TestExecuteSendsSeedPayloadAndIdempotencyKey(t *testing.T) {
	rec := &recorder{body: `{"tool_name":"fx.convert","success":true,"result":{"converted":1}}`}
	r := routerFor(t, rec, nil)
	res := r.Execute(context.Background(), Call{ToolName: "fx.convert", Arguments: map[string]any{"amount": 1}, UserID: "u-7", IdempotencyKey: "wf-1/5"})
	if !res.Success || string(res.Result) != `{"converted":1}` || res.Module != "fx" {
		t.Fatalf("result = %+v", res)
	}
	if got := rec.headers[0].Get(HeaderIdempotencyKey); got != "wf-1/5" {
		t.Fatalf("Idempotency-Key = %q", got)
	}
	b := rec.bodies[0]
	if b["tool_name"] != "fx.convert" || b["user_id"] != "u-7" || b["arguments"].(map[string]any)["amount"] != 1.0 {
		t.Fatalf("payload = %v", b)
	}
	// Without a user the call omits user_id.
	r.Execute(context.Background(), Call{ToolName: "fx.convert"})
	if _, ok := rec.bodies[1]["user_id"]; ok {
		t.Fatalf("payload without user has user_id: %v", rec.bodies[1])
	}
	if _, ok := rec.headers[1][HeaderIdempotencyKey]; ok {
		t.Fatal("empty idempotency key was sent")
	}
}

func TestExecuteAgainstDemoModuleIsIdempotent(t *testing.T) {
	mod, err := demomodule.New("currency")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mod)
	defer srv.Close()
	cfg := NewConfig()
	_ = cfg.Add("currency=" + srv.URL)
	r := NewRouter(cfg)
	m := mod.Manifests()[0]
	call := Call{ToolName: "currency.convert", Arguments: map[string]any{"amount": 20, "from": "EUR", "to": "GBP"},
		IdempotencyKey: "wf/1", InputSchema: m.InputSchema, OutputSchema: m.OutputSchema}
	a, b := r.Execute(context.Background(), call), r.Execute(context.Background(), call)
	if !a.Success || string(a.Result) != string(b.Result) {
		t.Fatalf("first %+v second %+v", a, b)
	}
	if mod.Executions("wf/1") != 1 || len(mod.Calls()) != 2 {
		t.Fatalf("executions %d calls %d, want 1 and 2", mod.Executions("wf/1"), len(mod.Calls()))
	}
}

func TestSplit(t *testing.T) {
	for in, want := range map[string][2]string{"a.b": {"a", "b"}, "git_platform.issue.create": {"git_platform", "issue.create"}} {
		m, tl, ok := Split(in)
		if !ok || m != want[0] || tl != want[1] {
			t.Errorf("Split(%q) = %q %q %v", in, m, tl, ok)
		}
	}
	for _, in := range []string{"", "a", ".b", "a."} {
		if _, _, ok := Split(in); ok {
			t.Errorf("Split(%q) ok", in)
		}
	}
}

func TestValidateArguments(t *testing.T) {
	r := NewRouter(NewConfig())
	if err := r.ValidateArguments(convertIn, map[string]any{"amount": 1, "from": "a", "to": "b"}); err != nil {
		t.Fatal(err)
	}
	err := r.ValidateArguments(convertIn, map[string]any{"amount": 1})
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "from") {
		t.Fatalf("err = %v", err)
	}
	if err := r.ValidateArguments(nil, map[string]any{"x": 1}); err != nil {
		t.Fatalf("no schema: %v", err)
	}
	if err := r.ValidateArguments(json.RawMessage(`{"type": 12}`), nil); err == nil || errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("broken schema must be an error of its own, got %v", err)
	}
}

// TestValidateArgumentsUsesTheRegistrationCompiler: run-time validation
// asserts formats (as registration does) and never reads a $ref from the
// server's disk.
func TestValidateArgumentsUsesTheRegistrationCompiler(t *testing.T) {
	r := NewRouter(NewConfig())
	dated := json.RawMessage(`{"type":"object","properties":{"day":{"type":"string","format":"date"}}}`)
	if err := r.ValidateArguments(dated, map[string]any{"day": "2026-11-25"}); err != nil {
		t.Fatalf("a real date: %v", err)
	}
	err := r.ValidateArguments(dated, map[string]any{"day": "not-a-date"})
	if !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "day") {
		t.Fatalf("not-a-date against format date: err = %v, want a mismatch naming day", err)
	}

	dir := t.TempDir()
	secret := dir + "/secret.json"
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"file://` + secret + `"}}}`)
	err = r.ValidateArguments(ref, map[string]any{"x": 1})
	if err == nil || errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "$ref") {
		t.Fatalf("file $ref: err = %v, want the schema refused for its external $ref", err)
	}
}
