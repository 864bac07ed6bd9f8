package api

import (
	"strings"

	"github.com/gin-gonic/gin"
)

// noStore marks every per-caller answer (the API under /api/, the MCP
// endpoint and the console's pages under /ui) Cache-Control: no-store,
// varying by Authorization and Cookie: they hold what one caller may see,
// a new key's secret among them, which neither a shared cache nor the
// browser's history may keep. The console's static assets (/ui/static/,
// /favicon.ico) and the server's own documents (/healthz, /metrics, the
// resource metadata) are the same for everyone and stay cacheable.
//
// A handler may set its own Cache-Control (the MCP SDK's event streams
// say "no-cache, no-transform"): no-store is put in front of it when the
// headers are written, so no answer below these paths goes without it.
func noStore(c *gin.Context) {
	if !perCaller(c.Request.URL.Path) {
		c.Next()
		return
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Authorization, Cookie")
	c.Writer = &noStoreWriter{ResponseWriter: c.Writer}
	c.Next()
}

// perCaller reports whether path's answers depend on who asks.
func perCaller(path string) bool {
	switch {
	case strings.HasPrefix(path, "/ui/static/"):
		return false
	case path == "/mcp", strings.HasPrefix(path, "/mcp/"),
		path == "/ui", strings.HasPrefix(path, "/ui/"),
		path == "/api", strings.HasPrefix(path, "/api/"):
		return true
	}
	return false
}

// noStoreWriter keeps no-store in Cache-Control when a handler replaced
// the header, at the moment the headers go out.
type noStoreWriter struct{ gin.ResponseWriter }

// keep puts no-store back in front of a Cache-Control the handler set.
// Once the headers are out the change is moot, and harmless.
func (w *noStoreWriter) keep() {
	h := w.Header()
	if cc := h.Get("Cache-Control"); !strings.Contains(strings.ToLower(cc), "no-store") {
		if cc == "" {
			h.Set("Cache-Control", "no-store")
		} else {
			h.Set("Cache-Control", "no-store, "+cc)
		}
	}
}

// WriteHeader keeps no-store before the status is recorded.
func (w *noStoreWriter) WriteHeader(code int) { w.keep(); w.ResponseWriter.WriteHeader(code) }

// WriteHeaderNow keeps no-store before the headers are written.
func (w *noStoreWriter) WriteHeaderNow() { w.keep(); w.ResponseWriter.WriteHeaderNow() }

// Write keeps no-store before the first body bytes.
func (w *noStoreWriter) Write(b []byte) (int, error) { w.keep(); return w.ResponseWriter.Write(b) }

// WriteString keeps no-store before the first body bytes.
func (w *noStoreWriter) WriteString(s string) (int, error) {
	w.keep()
	return w.ResponseWriter.WriteString(s)
}

// Flush keeps no-store before a stream's headers go out.
func (w *noStoreWriter) Flush() { w.keep(); w.ResponseWriter.Flush() }
