package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/mcp"
)

// MCP's bodies are bounded as the API's are (--max-body-bytes, 8 MiB by
// default), not by the SDK's own 4 MiB: a 5 MiB call is read, a body over
// the bound is a 413, and a smaller bound given in Deps holds.
func TestMCPBodyBoundIsTheServers(t *testing.T) {
	post := func(h http.Handler, size int) int {
		pad := strings.Repeat("a", size)
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},` +
			`"clientInfo":{"name":"big","version":"1"},"_meta":{"pad":"` + pad + `"}}}`
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	def := mcp.New(mcp.Deps{}).Handler()
	if code := post(def, 5<<20); code == http.StatusRequestEntityTooLarge {
		t.Errorf("a 5 MiB body under the 8 MiB default: %d", code)
	}
	if code := post(def, 9<<20); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 9 MiB body over the 8 MiB default: %d, want 413", code)
	}
	small := mcp.New(mcp.Deps{MaxBodyBytes: 1 << 20}).Handler()
	if code := post(small, 2<<20); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB body over a 1 MiB bound: %d, want 413", code)
	}
}
