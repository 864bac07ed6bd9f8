package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// Every per-caller answer (the API, the console's pages, the MCP endpoint,
// refusals and streams included) is Cache-Control: no-store and varies by
// Authorization and Cookie; the console's static assets and the server's
// own documents stay cacheable.
func TestPerCallerAnswersAreNotStored(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Level: "admin", Groups: []string{"*"}})
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		method, path, auth, body string
		hdr                      []string
	}{
		{"GET", "/api/v1/whoami", admin, "", nil},
		{"POST", "/api/v1/admin/keys", admin, `{"owner":"ana","level":"user"}`, nil},
		{"GET", "/api/v1/admin/keys", "", "", nil}, // a refusal
		{"GET", "/api/v1/nothing/here", "", "", nil},
		{"HEAD", "/api/v1/whoami", admin, "", nil},
		{"GET", "/ui/signin", "", "", nil},
		{"GET", "/ui/keys", "", "", nil},
		// The SDK sets its own Cache-Control on MCP answers.
		{"POST", "/mcp", admin, initialize, []string{"Accept", "application/json, text/event-stream"}},
		{"POST", "/mcp", "", "{", []string{"Accept", "application/json, text/event-stream"}},
	} {
		r := send(t, h, c.method, c.path, c.auth, c.body, c.hdr...)
		if cc := r.header.Get("Cache-Control"); !strings.HasPrefix(cc, "no-store") {
			t.Errorf("%s %s (%d): Cache-Control %q, want no-store", c.method, c.path, r.code, cc)
		}
		if v := strings.Join(r.header.Values("Vary"), ", "); !strings.Contains(v, "Authorization") || !strings.Contains(v, "Cookie") {
			t.Errorf("%s %s: Vary %q, want Authorization and Cookie", c.method, c.path, v)
		}
	}
	for _, path := range []string{"/ui/static/console.css", "/healthz", "/.well-known/oauth-protected-resource"} {
		r := send(t, h, "GET", path, "", "")
		if r.code != http.StatusOK || strings.Contains(r.header.Get("Cache-Control"), "no-store") {
			t.Errorf("GET %s: %d, Cache-Control %q: the same for every caller, it may be cached", path, r.code, r.header.Get("Cache-Control"))
		}
	}
}
