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
