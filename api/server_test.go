package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/testwait"
)

func init() { gin.SetMode(gin.TestMode) }

func newServer(t *testing.T, opts api.Options, m ...httpx.Mounter) (*api.Server, *testwait.Buffer) {
	t.Helper()
	logs := &testwait.Buffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.Rules == nil {
		opts.Rules = append(slices.Clone(api.Rules), testRoutes...)
	}
	return api.New(opts, m...), logs
}

// testRoutes are the rows of the routes these tests mount (public: the
// server's plumbing, not authorization, is under test here).
var testRoutes = func() []api.RouteRule {
	var out []api.RouteRule
	for _, r := range []string{"GET /api/v1/things", "GET /api/v1/boom", "GET /api/v1/items/:id", "POST /api/v1/zeta", "GET /api/v1/alpha", "GET /api/v1/slow"} {
		method, path, _ := strings.Cut(r, " ")
		out = append(out, api.RouteRule{Method: method, Path: path, Rule: identity.RulePublic})
	}
	return out
}()

func do(t *testing.T, h http.Handler, method, path string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v: %q", method, path, err, rec.Body.String())
	}
	return rec, body
}

func TestHealthzFollowsReadiness(t *testing.T) {
	var mu sync.Mutex
	readyErr := errors.New("loading demo catalogue")
	srv, logs := newServer(t, api.Options{Ready: func() error { mu.Lock(); defer mu.Unlock(); return readyErr }})

	rec, body := do(t, srv.Handler(), http.MethodGet, "/healthz")
	if rec.Code != http.StatusServiceUnavailable || body["status"] != "unavailable" || !strings.Contains(body["reason"].(string), "demo") {
		t.Fatalf("not ready: got %d %v", rec.Code, body)
	}
	// A poll while starting is an answer, not an error: logged at INFO.
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(logs.String())), &line); err != nil || line["level"] != "INFO" || line["status"] != float64(503) {
		t.Fatalf("503 poll logged as %v (%v)", line, err)
	}
	mu.Lock()
	readyErr = nil
	mu.Unlock()
	rec, body = do(t, srv.Handler(), http.MethodGet, "/healthz")
	if rec.Code != http.StatusOK || body["status"] != "ok" || len(body) != 1 {
		t.Fatalf("ready: got %d %v", rec.Code, body)
	}
}

func TestNotFoundAndMethodNotAllowedAreJSON(t *testing.T) {
	srv, _ := newServer(t, api.Options{}, httpx.MountFunc(func(v1 *gin.RouterGroup) {
		v1.GET("/things", func(c *gin.Context) { httpx.OK(c, http.StatusOK, []string{"a"}) })
	}))
	tests := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{http.MethodGet, "/nope", http.StatusNotFound, "not_found", ""},
		{http.MethodGet, "/api/v1/things/x/y", http.StatusNotFound, "not_found", ""},
		{http.MethodDelete, "/api/v1/things", http.StatusMethodNotAllowed, "method_not_allowed", "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			rec, body := do(t, srv.Handler(), tt.method, tt.path)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %v", rec.Code, tt.status, body)
			}
			if body["status"] != "error" {
				t.Fatalf("status field %v, want error", body["status"])
			}
			if got := body["error"].(map[string]any)["code"]; got != tt.code {
				t.Fatalf("code %v, want %s", got, tt.code)
			}
			if tt.allow != "" && !strings.Contains(rec.Header().Get("Allow"), tt.allow) {
				t.Fatalf("Allow %q, want it to contain %s", rec.Header().Get("Allow"), tt.allow)
			}
		})
	}
}

func TestRecoveryReturnsEnvelopeAndLogs(t *testing.T) {
	srv, logs := newServer(t, api.Options{}, httpx.MountFunc(func(v1 *gin.RouterGroup) {
		v1.GET("/boom", func(*gin.Context) { panic("kaboom") })
	}))
	rec, body := do(t, srv.Handler(), http.MethodGet, "/api/v1/boom")
	if rec.Code != http.StatusInternalServerError || body["status"] != "error" {
		t.Fatalf("got %d %v", rec.Code, body)
	}
	if msg := body["error"].(map[string]any)["message"].(string); strings.Contains(msg, "kaboom") {
		t.Fatalf("panic value leaked to the client: %q", msg)
	}
	out := logs.String()
	if !strings.Contains(out, "panic in http handler") || !strings.Contains(out, "kaboom") {
		t.Fatalf("panic not logged: %s", out)
	}
	if !strings.Contains(out, `"status":500`) {
		t.Fatalf("request log lacks the 500: %s", out)
	}
}

func TestRequestLogging(t *testing.T) {
	srv, logs := newServer(t, api.Options{}, httpx.MountFunc(func(v1 *gin.RouterGroup) {
		v1.GET("/items/:id", func(c *gin.Context) { httpx.OK(c, http.StatusOK, c.Param("id")) })
	}))
	do(t, srv.Handler(), http.MethodGet, "/api/v1/items/42")
	var rec map[string]any
	line := strings.TrimSpace(logs.String())
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	want := map[string]any{"msg": "http request", "method": "GET", "path": "/api/v1/items/42", "route": "/api/v1/items/:id", "status": float64(200), "level": "INFO"}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("log %s = %v, want %v", k, rec[k], v)
		}
	}
}

func TestIndexListsRoutes(t *testing.T) {
	srv, _ := newServer(t, api.Options{Version: "v9.9.9"}, httpx.MountFunc(func(v1 *gin.RouterGroup) {
		v1.POST("/zeta", func(*gin.Context) {})
		v1.GET("/alpha", func(*gin.Context) {})
	}))
	rec, body := do(t, srv.Handler(), http.MethodGet, "/api/v1")
	if rec.Code != http.StatusOK || body["status"] != "success" {
		t.Fatalf("got %d %v", rec.Code, body)
	}
	data := body["data"].(map[string]any)
	if data["version"] != "v9.9.9" {
		t.Fatalf("version %v", data["version"])
	}
	var paths []string
	for _, r := range data["routes"].([]any) {
		m := r.(map[string]any)
		paths = append(paths, m["method"].(string)+" "+m["path"].(string))
	}
	want := []string{"GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-protected-resource/mcp", "GET /api/v1", "GET /api/v1/alpha", "GET /api/v1/whoami", "POST /api/v1/zeta", "GET /healthz"}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Fatalf("routes %v, want %v", paths, want)
	}
}

func TestServeShutsDownGracefully(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	srv, _ := newServer(t, api.Options{ShutdownTimeout: 5 * time.Second}, httpx.MountFunc(func(v1 *gin.RouterGroup) {
		v1.GET("/slow", func(c *gin.Context) {
			close(started)
			<-release
			httpx.OK(c, http.StatusOK, "done")
		})
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	type result struct {
		status int
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/api/v1/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		resp.Body.Close()
		got <- result{status: resp.StatusCode}
	}()
	<-started
	cancel() // shutdown begins while the request is in flight
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v before the in-flight request finished", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if r := <-got; r.err != nil || r.status != http.StatusOK {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still accepting after shutdown")
	}
}

func TestRunReportsListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, _ := newServer(t, api.Options{})
	err = srv.Run(context.Background(), ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "api: listen on") {
		t.Fatalf("Run on a busy address: %v", err)
	}
}
