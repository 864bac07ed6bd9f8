package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/ratelimit"
)

// Defaults of Options.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultShutdownTimeout   = 15 * time.Second
)

// Options configure New. The zero value is usable: it logs to slog.Default
// and is always ready.
type Options struct {
	// Logger receives one record per request and every recovered panic;
	// nil means slog.Default().
	Logger *slog.Logger
	// Ready reports whether the system can serve requests; a non-nil error
	// makes GET /healthz answer 503 with the error text. Nil means always ready.
	Ready func() error
	// Version is reported by GET /api/v1.
	Version string
	// ReadHeaderTimeout bounds how long a client may take to send headers;
	// 0 means DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// ShutdownTimeout bounds the graceful drain in Serve once its context is
	// cancelled; 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	// Auth authenticates every request; nil makes every caller an
	// anonymous guest (so only public routes answer).
	Auth *identity.Authenticator
	// Rules is the authorization table; nil means api.Rules.
	Rules []RouteRule
	// Audit receives the audit events of audited routes and refused
	// credentials; nil audits nothing.
	Audit audit.Recorder
	// Metrics records requests and serves GET /metrics; nil serves no metrics.
	Metrics *metrics.Metrics
	// Limits bound request bodies.
	Limits Limits
	// Limiter applies the per-caller rate limits; share one with the MCP
	// edge so both doors take from the same buckets. Nil builds one with
	// the default limits.
	Limiter *ratelimit.Limiter
	// Proxies are the reverse proxies whose X-Forwarded-For names the
	// client (rate limits, audit, logs); none by default.
	Proxies identity.Proxies
	// Handlers are served beside /api/v1 at their own paths (the MCP
	// endpoint, the console); each path needs rows in Rules.
	Handlers []Handler
	// BaseURL is the scheme and host clients reach the server at
	// ("http://127.0.0.1:8080"): the resource_metadata URL of a 401 and
	// the resource of the metadata document are built from it, never from
	// the request's Host header, which the client chooses. Empty means
	// DefaultBaseURL.
	BaseURL string
}

// DefaultBaseURL is the base URL of a server given none.
const DefaultBaseURL = "http://localhost"

// Handler is an http.Handler served at a path outside /api/v1 for the
// given methods (a path ending in "/*any" serves a subtree).
type Handler struct {
	Methods []string
	Path    string
	Handler http.Handler
}

// Route is one registered method and path, as listed by GET /api/v1.
type Route struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// Server is Toolsmith's HTTP server. Build it with New; it is safe for
// concurrent use once built.
type Server struct {
	engine *gin.Engine
	opts   Options
	log    *slog.Logger
	// gate applies the authorization table to every request.
	gate *Gate
}

// New builds the server: middleware, /healthz, /api/v1 and every mounter's
// routes under /api/v1. Mounters must not register conflicting routes; gin
// panics on a conflict, which is a programming error caught by tests.
func New(opts Options, mounters ...httpx.Mounter) *Server {
	if gin.Mode() == gin.DebugMode {
		// Debug mode prints every route at start-up and warns on stdout;
		// tests that set gin.TestMode keep theirs.
		gin.SetMode(gin.ReleaseMode)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.Rules == nil {
		opts.Rules = Rules
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if opts.Limiter == nil {
		opts.Limiter = ratelimit.New(ratelimit.Config{}, opts.Metrics.RateLimited)
	}
	s := &Server{engine: gin.New(), opts: opts, log: opts.Logger, gate: NewGate(opts.Rules, opts.Audit, opts.Limiter)}
	s.gate.log = s.log
	e := s.engine
	// gin's ClientIP believes no header; the client's address is
	// Options.Proxies.ClientAddr, the one rule every edge uses.
	_ = e.SetTrustedProxies(nil)
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	// Path ids are checked once here, after authentication, so no handler
	// passes text Temporal, the file system or the store would refuse.
	e.Use(s.logRequests, s.recover, noStore, s.secure, checkPathIDs)
	e.NoRoute(func(c *gin.Context) {
		httpx.Error(c, fmt.Errorf("api: no route for %s %s: %w", c.Request.Method, c.Request.URL.Path, fault.ErrNotFound))
	})
	e.NoMethod(func(c *gin.Context) {
		// 405 is a routing outcome, not a domain error kind, so it is the one
		// envelope written here rather than through httpx.Error. gin has
		// already set the Allow header; HEAD goes wherever GET does.
		if allow := c.Writer.Header().Get("Allow"); strings.Contains(allow, http.MethodGet) && !strings.Contains(allow, http.MethodHead) {
			c.Writer.Header().Set("Allow", allow+", "+http.MethodHead)
		}
		c.AbortWithStatusJSON(http.StatusMethodNotAllowed, httpx.Envelope{Status: "error", Error: &httpx.ErrorBody{
			Code:    "method_not_allowed",
			Message: fmt.Sprintf("method %s is not allowed on %s; allowed: %s", c.Request.Method, c.Request.URL.Path, c.Writer.Header().Get("Allow")),
		}})
	})
	e.GET("/healthz", s.healthz)
	// RFC 9728 metadata, at the root (resource = the server) and with the
	// MCP endpoint's path appended (resource = /mcp), where MCP clients
	// look first after a 401.
	e.GET(identity.ResourceMetadataPath, s.resourceMetadata)
	e.GET(identity.ResourceMetadataPath+"/mcp", s.resourceMetadata)
	if opts.Metrics != nil {
		e.GET("/metrics", gin.WrapH(opts.Metrics.Handler()))
	}
	for _, h := range opts.Handlers {
		for _, m := range h.Methods {
			e.Handle(m, h.Path, gin.WrapH(h.Handler))
		}
	}
	v1 := e.Group("/api/v1")
	v1.GET("", s.index)
	v1.GET("/whoami", s.whoami)
	for _, m := range mounters {
		if m != nil {
			m.Mount(v1)
		}
	}
	return s
}

func checkPathIDs(c *gin.Context) {
	if httpx.CheckPathIDs(c) {
		c.Next()
	}
}

// Handler returns the server's http.Handler (for httptest and embedding).
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// HEAD is GET without the body (RFC 9110 §9.3.2): a GET route answers
		// it with the same status and headers, under the same rule, limits
		// and audit. MCP's GET opens an event stream, which a HEAD must not.
		if r.Method == http.MethodHead && r.URL.Path != mcpPath {
			r = r.Clone(r.Context())
			r.Method = http.MethodGet
			w = headWriter{w}
		}
		s.engine.ServeHTTP(w, r)
	})
}

// headWriter answers a HEAD request: headers and status as the GET's, the
// body dropped (net/http drops it too; this also holds for callers, such
// as tests, that serve without a server).
type headWriter struct{ http.ResponseWriter }

func (w headWriter) Write(b []byte) (int, error) { return len(b), nil }

// WriteString drops the body as Write does.
func (w headWriter) WriteString(s string) (int, error) { return len(s), nil }

// Flush passes a flush on when the writer below can.
func (w headWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer below.
func (w headWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Routes lists every registered route, ordered by path then method.
func (s *Server) Routes() []Route {
	info := s.engine.Routes()
	out := make([]Route, 0, len(info))
	for _, r := range info {
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	slices.SortFunc(out, func(a, b Route) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// Run listens on addr and serves until ctx is cancelled, then shuts down
// gracefully (see Serve).
func (s *Server) Run(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is cancelled, then stops accepting, waits up
// to Options.ShutdownTimeout for in-flight requests and returns nil. It
// returns an error when serving fails or the drain times out. Serve closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("api: serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.log.Info("http server shutting down", "addr", ln.Addr().String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("api: shutdown on %s: %w", ln.Addr(), err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("api: serve on %s: %w", ln.Addr(), err)
	}
	return nil
}

func (s *Server) healthz(c *gin.Context) {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(); err != nil {
			// Not ready yet (or any more) is an answer, not a failure:
			// pollers ask exactly this while the process starts.
			c.Set(expectedStatusKey, true)
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": err.Error()})
			return
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// resourceMetadata serves the protected resource metadata (RFC 9728): how
// to sign in, for clients (MCP Inspector) to show instead of starting an
// OAuth flow the server does not offer.
func (s *Server) resourceMetadata(c *gin.Context) {
	resource := s.opts.BaseURL + strings.TrimPrefix(c.Request.URL.Path, identity.ResourceMetadataPath)
	c.JSON(http.StatusOK, s.opts.Auth.Metadata(resource))
}

// Index is the body of GET /api/v1.
type Index struct {
	Service string  `json:"service"`
	Version string  `json:"version,omitempty"`
	Routes  []Route `json:"routes"`
}

// Whoami is the body of GET /api/v1/whoami: who the credential is and the
// caller it acts as after the request's narrowing headers.
type Whoami struct {
	Principal identity.Principal `json:"principal"`
	Caller    access.Caller      `json:"caller"`
}

func (s *Server) whoami(c *gin.Context) {
	caller, _ := httpx.Caller(c)
	httpx.OK(c, http.StatusOK, Whoami{Principal: httpx.Principal(c), Caller: caller})
}

func (s *Server) index(c *gin.Context) {
	httpx.OK(c, http.StatusOK, Index{Service: "toolsmith", Version: s.opts.Version, Routes: s.Routes()})
}

// expectedStatusKey marks a response whose error status is the expected
// answer (a /healthz 503 while starting), logged at info.
const expectedStatusKey = "toolsmith.expectedStatus"

// logRequests writes one slog record per request once it has been served:
// 5xx at error level, 4xx at warn, the rest (and expected answers such as
// /healthz's 503 while starting) at info. Errors handlers attached with
// c.Error (internal errors from httpx.Error) are included.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	status := c.Writer.Status()
	level := slog.LevelInfo
	switch {
	case c.GetBool(expectedStatusKey):
	case status >= 500:
		level = slog.LevelError
	case status >= 400:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("method", c.Request.Method),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", status),
		slog.Duration("latency", time.Since(start)),
		slog.String("client", s.opts.Proxies.ClientAddr(c.Request)),
		slog.Int("bytes", c.Writer.Size()),
	}
	if route := c.FullPath(); route != "" {
		attrs = append(attrs, slog.String("route", route))
	}
	if len(c.Errors) > 0 {
		attrs = append(attrs, slog.String("errors", c.Errors.String()))
	}
	s.log.LogAttrs(c.Request.Context(), level, "http request", attrs...)
	s.opts.Metrics.HTTPRequest(c.Request.Method, c.FullPath(), status, time.Since(start))
}

// recover turns a handler panic into a logged 500 error envelope.
// http.ErrAbortHandler keeps its meaning (abort the response silently).
func (s *Server) recover(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
			panic(v)
		}
		s.log.ErrorContext(c.Request.Context(), "panic in http handler",
			"method", c.Request.Method, "path", c.Request.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if c.Writer.Written() {
			// Headers are gone; all that is left is to stop the chain.
			c.Abort()
			return
		}
		httpx.Error(c, fmt.Errorf("api: panic: %v", v))
	}()
	c.Next()
}
