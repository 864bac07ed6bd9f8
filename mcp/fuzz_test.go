package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/mcp"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
)

// fuzzTools are the MCP tools FuzzMCPArguments calls: every gateway and kb
// tool, and the catalogue tool of the demo's currency converter.
var fuzzTools = []string{"find_tools", "call_tool", "fulfil_verb", "kb.hybrid_search", "kb.get_document",
	"kb.stats", "kb.list_collections", "kb.resolve_citations", "kb.answer", tool.FunctionName("currency.convert")}

// FuzzMCPArguments sends tools/call requests with arbitrary arguments to the
// MCP edge over Streamable HTTP (the handler /mcp serves), on a real SQLite
// store holding the demo currency tools; execution and the language model
// are not configured. Seeds are in testdata/fuzz/FuzzMCPArguments (the
// arguments of the tools' own examples). Properties:
//   - the edge answers every request without a server error (HTTP < 500);
//   - a well-formed request gets exactly one JSON-RPC response with its id,
//     holding a result or an error; a result marked isError says why.
func FuzzMCPArguments(f *testing.F) {
	for _, s := range []struct {
		tool uint8
		args string
	}{
		{0, `{"intent": "convert 100 USD to EUR"}`},
		{1, `{"toolId": "currency.convert", "arguments": {"amount": 100, "from": "USD", "to": "EUR"}, "dryRun": true}`},
		{2, `{"verb": "CONVERT_CURRENCY", "description": "convert money", "inputs": {"amount": 100}}`},
		{3, `{"query": "MAKE_RESERVATION", "context": "flight to Denver", "limit": 3}`},
		{4, `{"id": "currency.convert", "startLine": 1, "endLine": 20}`},
		{4, `{"id": "currency.convert", "startByte": 3, "endByte": 2}`},
		{6, `{"kind": "categories", "prefix": "tra"}`},
		{7, `{"ids": ["currency.convert"]}`},
		{8, `{"question": "Which tool converts currencies?"}`},
		{9, `{"amount": 100, "from": "USD", "to": "EUR"}`},
		{9, `[1,2]`},
		{0, `{"intent": 3}`},
		{4, `{"id": "currency.convert", "startByte": 1e20}`},
		{4, `{"id": "currency.convert", "startLine": 2.5}`},
		{9, `{"amount": "100", "from": "USD", "to": "EUR"}`},
	} {
		f.Add(s.tool, []byte(s.args))
	}
	h := fuzzEdge(f)
	session := initialize(f, h)
	id := 0
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		id++
		name := fuzzTools[int(which)%len(fuzzTools)]
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
		code, msgs := post(t, h, session, body)
		if code >= 500 {
			t.Fatalf("HTTP %d for %s", code, body)
		}
		if !json.Valid([]byte(body)) {
			return // a parse error, in whatever form, is the right answer
		}
		if code == http.StatusTooManyRequests {
			return // a rate limit is an answer too
		}
		if code != http.StatusOK {
			t.Fatalf("HTTP %d for a well-formed call %s", code, body)
		}
		if len(msgs) != 1 {
			t.Fatalf("%d responses to %s", len(msgs), body)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(msgs[0], &resp); err != nil {
			t.Fatalf("response %s: %v", msgs[0], err)
		}
		if resp.ID != id || (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("response %s to %s: want id %d and one of result, error", msgs[0], body, id)
		}
		if resp.Error != nil {
			if resp.Error.Message == "" {
				t.Fatalf("an error without a message: %s", msgs[0])
			}
			return
		}
		var result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(resp.Result, &result); err != nil {
			t.Fatalf("result %s: %v", resp.Result, err)
		}
		if result.IsError && (len(result.Content) == 0 || strings.TrimSpace(result.Content[0].Text) == "") {
			t.Fatalf("a tool error that says nothing: %s", resp.Result)
		}
	})
}

// fuzzEdge builds the MCP edge over a SQLite store with the demo's
// currency tools registered and in its catalogue.
func fuzzEdge(f *testing.F) http.Handler {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(f.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	emb := hashing.New(64)
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
		f.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "demo", "catalog", "currency.json"))
	if err != nil {
		f.Fatal(err)
	}
	var manifests []json.RawMessage
	if err := json.Unmarshal(raw, &manifests); err != nil {
		f.Fatal(err)
	}
	reg := registry.New(st, emb)
	for _, m := range manifests {
		if _, err := reg.Register(ctx, registry.Request{Manifest: m}); err != nil {
			f.Fatal(err)
		}
	}
	edge := mcp.New(mcp.Deps{Retrieval: retrieval.New(st, emb, retrieval.Options{}), Store: st, Metrics: metrics.New()})
	if _, err := edge.LoadCatalogue(ctx); err != nil {
		f.Fatal(err)
	}
	return edge.Handler()
}

// initialize opens an MCP session and returns its id.
func initialize(f *testing.F, h http.Handler) string {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	session := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || session == "" {
		f.Fatalf("initialize: HTTP %d, session %q: %s", rec.Code, session, rec.Body)
	}
	code, _ := post(f, h, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code >= 300 {
		f.Fatalf("notifications/initialized: HTTP %d", code)
	}
	return session
}

// post sends one JSON-RPC body in the session and returns the status and
// the JSON-RPC messages of the answer (JSON or an event stream).
func post(t testing.TB, h http.Handler, session, body string) (int, [][]byte) {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		if b := bytes.TrimSpace(rec.Body.Bytes()); len(b) > 0 {
			return rec.Code, [][]byte{b}
		}
		return rec.Code, nil
	}
	var msgs [][]byte
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			msgs = append(msgs, []byte(data))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the event stream: %v", err)
	}
	return rec.Code, msgs
}
