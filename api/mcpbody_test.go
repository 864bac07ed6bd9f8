package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// An oversized body of unknown length (chunked) at /mcp is refused with
// the API's JSON envelope, as one whose length is known is, not the MCP
// SDK's plain text; a chunked body within the bound is served.
func TestMCPChunkedBodyOverTheBoundIsAnEnvelope(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	user := identitytest.Bearer(t, keys, identity.NewKey{Level: "user", Groups: []string{"*"}})
	post := func(body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", io.MultiReader(strings.NewReader(body)))
		req.ContentLength = -1 // chunked: the length is found only by reading
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", user)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	initialize := func(pad int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},` +
			`"clientInfo":{"name":"big","version":"1"},"_meta":{"pad":"` + strings.Repeat("a", pad) + `"}}}`
	}
	rec := post(initialize(9 << 20))
	var env struct {
		Status string `json:"status"`
		Error  struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); rec.Code != http.StatusRequestEntityTooLarge || err != nil || env.Status != "error" ||
		!strings.Contains(env.Error.Message, "byte limit") || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("chunked 9 MiB body: %d %q %.200s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	if rec := post(initialize(10)); rec.Code != http.StatusOK {
		t.Fatalf("chunked small body: %d %.200s", rec.Code, rec.Body.String())
	}
}

// A JSON-RPC message at /mcp that gives a key twice anywhere, its envelope
// included (two params.name, two params.arguments), is refused with the
// API's envelope naming the key, as a REST body is: decoded, the last one
// would win, and what ran would not be what a proxy reading the first one
// saw. The same message without the repeat is served.
func TestMCPMessageRepeatingAKeyIsRefused(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	user := identitytest.Bearer(t, keys, identity.NewKey{Level: "user", Groups: []string{"*"}})
	post := func(body string, length bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		if !length {
			req.ContentLength = -1
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", user)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, c := range []struct{ body, field string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kb.list_collections","name":"call_tool","arguments":{}}}`, "params.name"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"toolId":"a.b"},"arguments":{"toolId":"c.d"}}}`, "params.arguments"},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "id"},
	} {
		for _, length := range []bool{true, false} {
			rec := post(c.body, length)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), c.field) {
				t.Errorf("%s (length known %v): %d %.300s", c.body, length, rec.Code, rec.Body.String())
			}
		}
	}
	if rec := post(init, true); rec.Code != http.StatusOK {
		t.Fatalf("initialize: %d %.200s", rec.Code, rec.Body.String())
	}
}
