package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/api/tools"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/registry"
)

func init() { gin.SetMode(gin.TestMode) }

// wordEmbedder is a tiny deterministic embed.Model: hashed bag of words,
// unit length. It keeps these tests independent of model weights.
type wordEmbedder struct{}

const testDim = 32

func (wordEmbedder) Name() string   { return "test-words" }
func (wordEmbedder) Dimension() int { return testDim }
func (e wordEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	v := make([]float32, testDim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%testDim]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v, nil
}
func (e wordEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i], _ = e.EmbedQuery(ctx, t)
	}
	return out, nil
}

type fixture struct {
	t     *testing.T
	store *sqlite.Store
	h     http.Handler
	keys  *identity.KeyService
	// admin is the Authorization header every request carries unless it
	// sets its own ("" = anonymous).
	admin string
}

func newFixture(t *testing.T, extra ...httpx.Mounter) *fixture {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "tools.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := registry.New(st, wordEmbedder{})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mounters := append([]httpx.Mounter{tools.New(svc)}, extra...)
	keys := identity.NewKeyService(identitytest.NewMem())
	auth := &identity.Authenticator{Keys: keys}
	f := &fixture{t: t, store: st, keys: keys, h: api.New(api.Options{Logger: log, Auth: auth}, mounters...).Handler()}
	f.admin = identitytest.Bearer(t, keys, identity.NewKey{Level: "admin", Groups: []string{"*"}})
	return f
}

// bearer makes a key and returns its Authorization header value.
func (f *fixture) bearer(k identity.NewKey) string { return identitytest.Bearer(f.t, f.keys, k) }

type response struct {
	Code   int
	Header http.Header
	Body   struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Fields  []struct {
				Path    string `json:"path"`
				Message string `json:"message"`
			} `json:"fields"`
		} `json:"error"`
	}
	Raw string
}

func (f *fixture) do(method, path string, body any, headers ...string) response {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", f.admin)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var r response
	r.Code, r.Header, r.Raw = rec.Code, rec.Header(), rec.Body.String()
	if err := json.Unmarshal(rec.Body.Bytes(), &r.Body); err != nil {
		f.t.Fatalf("%s %s: body is not a JSON envelope: %v: %s", method, path, err, r.Raw)
	}
	return r
}

func (r response) data(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body.Data, v); err != nil {
		t.Fatalf("decode data %s: %v", r.Body.Data, err)
	}
}

func (r response) fieldPaths() []string {
	if r.Body.Error == nil {
		return nil
	}
	var out []string
	for _, f := range r.Body.Error.Fields {
		out = append(out, f.Path)
	}
	return out
}

func manifest(id string, mut ...func(map[string]any)) map[string]any {
	m := map[string]any{
		"toolId":      id,
		"verb":        "CONVERT_CURRENCY",
		"name":        "Convert " + id,
		"description": "Converts an amount of money from one currency to another at the current rate.",
		"category":    "finance",
		"tags":        []string{"money", "fx"},
		"inputSchema": map[string]any{
			"type":     "object",
			"required": []string{"amount", "from", "to"},
			"properties": map[string]any{
				"amount": map[string]any{"type": "number"},
				"from":   map[string]any{"type": "string"},
				"to":     map[string]any{"type": "string"},
			},
		},
	}
	for _, f := range mut {
		f(m)
	}
	return m
}

func reg(m map[string]any) map[string]any { return map[string]any{"manifest": m} }

// snapshot captures everything an invalid request must leave untouched.
func (f *fixture) snapshot() string {
	f.t.Helper()
	ctx := context.Background()
	page, err := f.store.ListTools(ctx, graph.ListQuery{Limit: 1000, Filter: graph.Filter{Statuses: []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled}}})
	if err != nil {
		f.t.Fatal(err)
	}
	stats, err := f.store.Stats(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stats=%+v\n", stats)
	for _, s := range page.Items {
		t, err := f.store.GetTool(ctx, s.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		h, err := f.store.History(ctx, s.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s status=%s updated=%d manifest=%s emb=%v revisions=%d\n", t.ID, t.Status, t.UpdatedAt.UnixNano(), t.Manifest, t.Embedding, len(h))
	}
	return b.String()
}

func TestRegisterGetAndList(t *testing.T) {
	f := newFixture(t)
	r := f.do(http.MethodPost, "/api/v1/tools/register", map[string]any{
		"manifest": manifest("fx.convert"),
		"useCases": []string{"convert dollars to euros"},
	})
	if r.Code != http.StatusCreated || r.Body.Status != "success" {
		t.Fatalf("register: %d %s", r.Code, r.Raw)
	}
	var res registry.Result
	r.data(t, &res)
	if res.ToolID != "fx.convert" || !res.Created || res.Revision != 1 || !res.Indexed {
		t.Fatalf("result %+v", res)
	}
	if loc := r.Header.Get("Location"); loc != "/api/v1/tools/fx.convert" {
		t.Fatalf("Location %q", loc)
	}

	r = f.do(http.MethodGet, "/api/v1/tools/fx.convert", nil)
	if r.Code != http.StatusOK {
		t.Fatalf("get: %d %s", r.Code, r.Raw)
	}
	var got graph.Tool
	r.data(t, &got)
	if got.ID != "fx.convert" || got.Status != graph.StatusActive || !strings.Contains(string(got.Manifest), `"convert dollars to euros"`) {
		t.Fatalf("get: %+v manifest=%s", got.ToolSummary, got.Manifest)
	}
	if strings.Contains(r.Raw, `"embedding"`) {
		t.Fatalf("embedding leaked into the response: %s", r.Raw)
	}

	r = f.do(http.MethodGet, "/api/v1/tools", nil)
	var page tools.Page
	r.data(t, &page)
	if r.Code != http.StatusOK || page.Count != 1 || page.Items[0].ID != "fx.convert" || page.NextCursor != "" {
		t.Fatalf("list: %d %s", r.Code, r.Raw)
	}
	if strings.Contains(r.Raw, `"manifest"`) {
		t.Fatalf("list is not lightweight: %s", r.Raw)
	}
}

func TestRegisterErrors(t *testing.T) {
	f := newFixture(t)
	if r := f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("fx.convert"))); r.Code != http.StatusCreated {
		t.Fatalf("seed: %d %s", r.Code, r.Raw)
	}
	before := f.snapshot()
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		fields []string
	}{
		{"duplicate", reg(manifest("fx.convert")), http.StatusConflict, "conflict", nil},
		{"not json", "{", http.StatusBadRequest, "bad_request", []string{"body"}},
		{"empty body", "", http.StatusBadRequest, "bad_request", []string{"body"}},
		{"unknown top-level field", map[string]any{"manifest": manifest("a.b"), "bogus": 1}, http.StatusBadRequest, "bad_request", []string{"bogus"}},
		{"wrong type", map[string]any{"manifest": manifest("a.b"), "forceReindex": "yes"}, http.StatusBadRequest, "bad_request", []string{"forceReindex"}},
		{"missing manifest", map[string]any{"useCases": []string{"x"}}, http.StatusBadRequest, "bad_request", []string{"manifest"}},
		{"bad verb", reg(manifest("fx.other", func(m map[string]any) { m["verb"] = "convert currency" })), http.StatusUnprocessableEntity, "validation_failed", []string{"manifest.verb"}},
		{"bad schema type", reg(manifest("fx.other", func(m map[string]any) {
			m["inputSchema"].(map[string]any)["properties"].(map[string]any)["amount"] = map[string]any{"type": "money"}
		})), http.StatusUnprocessableEntity, "validation_failed", []string{"manifest.inputSchema.properties.amount.type"}},
		{"example breaks schema", map[string]any{
			"manifest": manifest("fx.other"),
			"examples": []map[string]any{{"scenario": "s", "input": map[string]any{"amount": "ten", "from": "USD", "to": "EUR"}}},
		}, http.StatusUnprocessableEntity, "validation_failed", []string{"examples[0].input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(http.MethodPost, "/api/v1/tools/register", tt.body)
			if r.Code != tt.status || r.Body.Status != "error" || r.Body.Error == nil || r.Body.Error.Code != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Code, r.Raw, tt.status, tt.code)
			}
			paths := strings.Join(r.fieldPaths(), " ")
			for _, want := range tt.fields {
				if !strings.Contains(paths, want) {
					t.Errorf("fields %q do not name %s: %s", paths, want, r.Raw)
				}
			}
			if after := f.snapshot(); after != before {
				t.Fatalf("an invalid registration changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	// The failed "fx.other" attempts left no trace.
	if r := f.do(http.MethodGet, "/api/v1/tools/fx.other", nil); r.Code != http.StatusNotFound {
		t.Fatalf("fx.other after failed registrations: %d %s", r.Code, r.Raw)
	}
}

func TestUpdate(t *testing.T) {
	f := newFixture(t)
	f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("fx.convert")))

	r := f.do(http.MethodPut, "/api/v1/tools/fx.convert", reg(manifest("fx.convert", func(m map[string]any) { m["name"] = "Currency converter" })))
	var res registry.Result
	r.data(t, &res)
	if r.Code != http.StatusOK || res.Created || res.Revision != 2 {
		t.Fatalf("update: %d %s", r.Code, r.Raw)
	}
	r = f.do(http.MethodGet, "/api/v1/tools/fx.convert", nil)
	var got graph.Tool
	r.data(t, &got)
	if got.Name != "Currency converter" {
		t.Fatalf("name after update %q", got.Name)
	}

	before := f.snapshot()
	tests := []struct {
		name, path string
		body       any
		status     int
		field      string
	}{
		{"unknown id", "/api/v1/tools/fx.nope", reg(manifest("fx.nope")), http.StatusNotFound, ""},
		{"id mismatch", "/api/v1/tools/fx.convert", reg(manifest("fx.other")), http.StatusUnprocessableEntity, "manifest.toolId"},
		{"invalid manifest", "/api/v1/tools/fx.convert", reg(manifest("fx.convert", func(m map[string]any) { m["version"] = "one" })), http.StatusUnprocessableEntity, "manifest.version"},
		{"malformed", "/api/v1/tools/fx.convert", `{"manifest": [}`, http.StatusBadRequest, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(http.MethodPut, tt.path, tt.body)
			if r.Code != tt.status {
				t.Fatalf("got %d %s, want %d", r.Code, r.Raw, tt.status)
			}
			if tt.field != "" && !strings.Contains(strings.Join(r.fieldPaths(), " "), tt.field) {
				t.Fatalf("fields %v do not name %s", r.fieldPaths(), tt.field)
			}
			if after := f.snapshot(); after != before {
				t.Fatalf("an invalid update changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestDeprecateKeepsHistory(t *testing.T) {
	f := newFixture(t)
	f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("fx.convert")))
	f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("fx.rates")))

	r := f.do(http.MethodDelete, "/api/v1/tools/fx.convert", map[string]any{"reason": "replaced by fx.convert2"})
	var dep tools.DeprecateResult
	r.data(t, &dep)
	if r.Code != http.StatusOK || dep.Status != graph.StatusDeprecated || dep.Reason != "replaced by fx.convert2" || dep.Revision != 2 {
		t.Fatalf("deprecate: %d %s", r.Code, r.Raw)
	}
	r = f.do(http.MethodDelete, "/api/v1/tools/fx.rates?reason=obsolete", nil)
	r.data(t, &dep)
	if r.Code != http.StatusOK || dep.Reason != "obsolete" {
		t.Fatalf("deprecate with query: %d %s", r.Code, r.Raw)
	}

	// Still readable, with its history.
	r = f.do(http.MethodGet, "/api/v1/tools/fx.convert", nil)
	var got graph.Tool
	r.data(t, &got)
	if r.Code != http.StatusOK || got.Status != graph.StatusDeprecated {
		t.Fatalf("get deprecated: %d %s", r.Code, r.Raw)
	}
	r = f.do(http.MethodGet, "/api/v1/tools/fx.convert/history", nil)
	var hist struct {
		ToolID    string           `json:"toolId"`
		Revisions []graph.Revision `json:"revisions"`
	}
	r.data(t, &hist)
	if r.Code != http.StatusOK || len(hist.Revisions) != 2 || hist.Revisions[0].Status != graph.StatusActive ||
		hist.Revisions[1].Status != graph.StatusDeprecated || hist.Revisions[1].Reason != "replaced by fx.convert2" {
		t.Fatalf("history: %d %s", r.Code, r.Raw)
	}

	// The default index shows active tools only; status= selects others.
	r = f.do(http.MethodGet, "/api/v1/tools", nil)
	var page tools.Page
	r.data(t, &page)
	if page.Count != 0 {
		t.Fatalf("deprecated tools in the default index: %s", r.Raw)
	}
	r = f.do(http.MethodGet, "/api/v1/tools?status=deprecated", nil)
	r.data(t, &page)
	if page.Count != 2 {
		t.Fatalf("status=deprecated: %s", r.Raw)
	}

	tests := []struct {
		name, path string
		body       any
		status     int
		field      string
	}{
		{"unknown", "/api/v1/tools/fx.nope", nil, http.StatusNotFound, ""},
		{"unknown body field", "/api/v1/tools/fx.convert", map[string]any{"why": "x"}, http.StatusBadRequest, "why"},
		{"conflicting reasons", "/api/v1/tools/fx.convert?reason=a", map[string]any{"reason": "b"}, http.StatusBadRequest, "reason"},
		{"reason too long", "/api/v1/tools/fx.convert?reason=" + strings.Repeat("x", tools.MaxReasonLen+1), nil, http.StatusUnprocessableEntity, "reason"},
		{"control characters in the reason", "/api/v1/tools/fx.convert?reason=gone%1B%5B2J", nil, http.StatusBadRequest, "reason"},
		{"control characters in the body's reason", "/api/v1/tools/fx.convert", map[string]any{"reason": "gone\x00"}, http.StatusBadRequest, "reason"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(http.MethodDelete, tt.path, tt.body)
			if r.Code != tt.status {
				t.Fatalf("got %d %s, want %d", r.Code, r.Raw, tt.status)
			}
			if tt.field != "" && !strings.Contains(strings.Join(r.fieldPaths(), " "), tt.field) {
				t.Fatalf("fields %v do not name %s", r.fieldPaths(), tt.field)
			}
		})
	}

	// Deprecating a deprecated tool again is idempotent: no new revision,
	// the same answer (its first reason stands).
	for range 2 {
		r = f.do(http.MethodDelete, "/api/v1/tools/fx.convert?reason=again", nil)
		r.data(t, &dep)
		if r.Code != http.StatusOK || dep.Status != graph.StatusDeprecated || dep.Reason != "replaced by fx.convert2" || dep.Revision != 2 {
			t.Fatalf("deprecate again: %d %s", r.Code, r.Raw)
		}
	}
	r = f.do(http.MethodGet, "/api/v1/tools/fx.convert/history", nil)
	r.data(t, &hist)
	if len(hist.Revisions) != 2 {
		t.Fatalf("history after repeated deprecations: %s", r.Raw)
	}

	// Re-registering an existing (deprecated) id conflicts; an update re-activates it.
	if r := f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("fx.convert"))); r.Code != http.StatusConflict {
		t.Fatalf("register over deprecated: %d %s", r.Code, r.Raw)
	}
	if r := f.do(http.MethodPut, "/api/v1/tools/fx.convert", reg(manifest("fx.convert", func(m map[string]any) { m["status"] = "active" }))); r.Code != http.StatusOK {
		t.Fatalf("re-activate: %d %s", r.Code, r.Raw)
	}
	r = f.do(http.MethodGet, "/api/v1/tools", nil)
	r.data(t, &page)
	if page.Count != 1 || page.Items[0].ID != "fx.convert" {
		t.Fatalf("after re-activation: %s", r.Raw)
	}
}

func TestBatchRegisterPartialSuccess(t *testing.T) {
	f := newFixture(t)
	f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("fx.existing")))
	body := map[string]any{"tools": []any{
		reg(manifest("fx.a")),
		reg(manifest("fx.bad", func(m map[string]any) { m["verb"] = "lower" })),
		reg(manifest("fx.existing")),
		reg(manifest("fx.b")),
		reg(manifest("fx.a")),
	}}
	r := f.do(http.MethodPost, "/api/v1/tools/batch-register", body)
	if r.Code != http.StatusOK {
		t.Fatalf("batch: %d %s", r.Code, r.Raw)
	}
	var res tools.BatchResult
	r.data(t, &res)
	wantStatus := []string{"created", "failed", "failed", "created", "failed"}
	wantCode := []string{"", "validation_failed", "conflict", "", "conflict"}
	if res.Total != 5 || res.Created != 2 || res.Failed != 3 {
		t.Fatalf("counts: %s", r.Raw)
	}
	for i, it := range res.Results {
		code := ""
		if it.Error != nil {
			code = it.Error.Code
		}
		if it.Index != i || it.Status != wantStatus[i] || code != wantCode[i] {
			t.Errorf("item %d: %+v (error %+v), want %s %s", i, it, it.Error, wantStatus[i], wantCode[i])
		}
	}
	if e := res.Results[1].Error; e == nil || len(e.Fields) == 0 || e.Fields[0].Path != "manifest.verb" {
		t.Fatalf("bad item does not name its field: %+v", res.Results[1])
	}
	// An item's code is the one the single request answers for the same rule.
	for i, item := range body["tools"].([]any)[1:3] {
		one := f.do(http.MethodPost, "/api/v1/tools/register", item)
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(one.Raw), &env); err != nil || env.Error.Code != res.Results[i+1].Error.Code {
			t.Errorf("item %d code %q, single registration %q (%v)", i+1, res.Results[i+1].Error.Code, env.Error.Code, err)
		}
	}
	for _, id := range []string{"fx.a", "fx.b"} {
		if r := f.do(http.MethodGet, "/api/v1/tools/"+id, nil); r.Code != http.StatusOK {
			t.Fatalf("%s after batch: %d", id, r.Code)
		}
	}
	if r := f.do(http.MethodGet, "/api/v1/tools/fx.bad", nil); r.Code != http.StatusNotFound {
		t.Fatalf("fx.bad after batch: %d", r.Code)
	}

	// Upsert: replaced, unchanged.
	r = f.do(http.MethodPost, "/api/v1/tools/batch-register", map[string]any{"upsert": true, "tools": []any{
		reg(manifest("fx.existing", func(m map[string]any) { m["name"] = "Renamed" })),
		reg(manifest("fx.a")),
	}})
	r.data(t, &res)
	if r.Code != http.StatusOK || res.Updated != 1 || res.Unchanged != 1 || res.Results[0].Status != "updated" || res.Results[1].Status != "unchanged" {
		t.Fatalf("upsert batch: %d %s", r.Code, r.Raw)
	}

	before := f.snapshot()
	tests := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"no tools field", map[string]any{"upsert": true}, http.StatusBadRequest, "tools"},
		{"empty list", map[string]any{"tools": []any{}}, http.StatusUnprocessableEntity, "tools"},
		{"item not an object", map[string]any{"tools": []any{"x"}}, http.StatusBadRequest, "tools"},
		{"unknown field in item", map[string]any{"tools": []any{map[string]any{"manifest": manifest("fx.z"), "nope": true}}}, http.StatusBadRequest, "nope"},
		{"too many", map[string]any{"tools": make([]map[string]any, tools.MaxBatchItems+1)}, http.StatusUnprocessableEntity, "tools"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.do(http.MethodPost, "/api/v1/tools/batch-register", tt.body)
			if r.Code != tt.status {
				t.Fatalf("got %d %s, want %d", r.Code, r.Raw, tt.status)
			}
			if !strings.Contains(strings.Join(r.fieldPaths(), " "), tt.field) {
				t.Fatalf("fields %v do not name %s", r.fieldPaths(), tt.field)
			}
			if after := f.snapshot(); after != before {
				t.Fatal("a rejected batch changed the store")
			}
		})
	}
}

func TestVisibility(t *testing.T) {
	f := newFixture(t)
	f.do(http.MethodPost, "/api/v1/tools/batch-register", map[string]any{"tools": []any{
		reg(manifest("pub.tool")),
		reg(manifest("admin.tool", func(m map[string]any) { m["requiredPermission"] = "admin" })),
		reg(manifest("role.tool", func(m map[string]any) { m["permissionsRequired"] = []string{"role:ops"} })),
		reg(manifest("travel.tool", func(m map[string]any) { m["groups"] = []string{"travel"} })),
		reg(manifest("checkout.tool", func(m map[string]any) { m["availableInStates"] = []string{"checkout"} })),
	}})
	list := func(headers ...string) []string {
		t.Helper()
		r := f.do(http.MethodGet, "/api/v1/tools", nil, headers...)
		if r.Code != http.StatusOK {
			t.Fatalf("list %v: %d %s", headers, r.Code, r.Raw)
		}
		var p tools.Page
		r.data(t, &p)
		var ids []string
		for _, it := range p.Items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	tests := []struct {
		name    string
		headers []string
		want    []string
	}{
		{"anonymous guest, default group", []string{"Authorization", ""}, []string{"pub.tool"}},
		{"admin", []string{"Authorization", f.bearer(identity.NewKey{Level: "admin"})}, []string{"admin.tool", "pub.tool"}},
		{"role", []string{"Authorization", f.bearer(identity.NewKey{Level: "user", Roles: []string{"ops"}})}, []string{"pub.tool", "role.tool"}},
		{"travel group only", []string{"Authorization", f.bearer(identity.NewKey{Level: "user", Groups: []string{"travel", "default"}}), identity.HeaderGroups, "travel"},
			[]string{"travel.tool"}},
		{"all groups, checkout state, owner", []string{"Authorization", f.bearer(identity.NewKey{Level: "owner", Groups: []string{"*"}}), identity.HeaderState, "checkout"},
			[]string{"admin.tool", "checkout.tool", "pub.tool", "travel.tool"}},
		{"empty group list sees nothing", []string{"Authorization", "", identity.HeaderGroups, ""}, nil},
		{"headers claiming a level or roles are ignored", []string{"Authorization", "", identity.HeaderLevel, "owner", identity.HeaderRoles, "ops", identity.HeaderUserID, "root"},
			[]string{"pub.tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := list(tt.headers...); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}

	// A hidden tool is a 404 indistinguishable from an unknown one.
	f.admin = "" // anonymous from here on
	hidden := f.do(http.MethodGet, "/api/v1/tools/admin.tool", nil)
	unknown := f.do(http.MethodGet, "/api/v1/tools/zz.unknown", nil)
	if hidden.Code != http.StatusNotFound || unknown.Code != http.StatusNotFound {
		t.Fatalf("hidden %d, unknown %d", hidden.Code, unknown.Code)
	}
	norm := func(r response) string { return strings.ReplaceAll(r.Body.Error.Message, "zz.unknown", "admin.tool") }
	if norm(hidden) != norm(unknown) || hidden.Body.Error.Code != unknown.Body.Error.Code {
		t.Fatalf("hidden and unknown differ: %q vs %q", hidden.Raw, unknown.Raw)
	}
	if r := f.do(http.MethodGet, "/api/v1/tools/admin.tool/history", nil); r.Code != http.StatusNotFound {
		t.Fatalf("history of hidden tool: %d", r.Code)
	}
	if r := f.do(http.MethodGet, "/api/v1/tools/admin.tool", nil, "Authorization", f.bearer(identity.NewKey{Level: "admin"})); r.Code != http.StatusOK {
		t.Fatalf("admin get: %d %s", r.Code, r.Raw)
	}
	// Groups outside the credential's are refused, not silently granted.
	if r := f.do(http.MethodGet, "/api/v1/tools", nil, identity.HeaderGroups, "travel"); r.Code != http.StatusForbidden ||
		!strings.Contains(r.Body.Error.Message, identity.HeaderGroups) {
		t.Fatalf("groups outside the credential: %d %s", r.Code, r.Raw)
	}
}

func TestListPagingAndFilters(t *testing.T) {
	f := newFixture(t)
	var items []any
	for i := 0; i < 7; i++ {
		cat := "finance"
		if i%2 == 1 {
			cat = "travel"
		}
		id := fmt.Sprintf("t%d.tool", i)
		items = append(items, reg(manifest(id, func(m map[string]any) { m["category"] = cat })))
	}
	if r := f.do(http.MethodPost, "/api/v1/tools/batch-register", map[string]any{"tools": items}); r.Code != http.StatusOK {
		t.Fatal(r.Raw)
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		r := f.do(http.MethodGet, "/api/v1/tools?limit=3&cursor="+cursor, nil)
		var p tools.Page
		r.data(t, &p)
		if p.Count > 3 {
			t.Fatalf("page over limit: %s", r.Raw)
		}
		for _, it := range p.Items {
			seen = append(seen, it.ID)
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) != 7 || seen[0] != "t0.tool" || seen[6] != "t6.tool" {
		t.Fatalf("paged ids %v", seen)
	}

	r := f.do(http.MethodGet, "/api/v1/tools?category=travel", nil)
	var p tools.Page
	r.data(t, &p)
	if p.Count != 3 {
		t.Fatalf("category=travel: %s", r.Raw)
	}
	for _, it := range p.Items {
		if it.Category != "travel" {
			t.Fatalf("category filter leaked %s", it.ID)
		}
	}

	tests := []struct {
		query string
		field string
	}{
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"limit=ten", "limit"},
		{"status=gone", "status"},
		{"sort=popular", "sort"},
		{"sort=uses&cursor=x", "cursor"},
		// A cursor the server did not issue is refused, never the page
		// after whatever it names: made up, a tool id typed by hand.
		{"cursor=bad", "cursor"},
		{"cursor=t1.tool", "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := f.do(http.MethodGet, "/api/v1/tools?"+tt.query, nil)
			if r.Code != http.StatusBadRequest || !strings.Contains(strings.Join(r.fieldPaths(), " "), tt.field) {
				t.Fatalf("got %d %s", r.Code, r.Raw)
			}
		})
	}
}

// TestListByUse pages the tools most used first (then by id), with their
// counts, hiding what the caller may not see.
func TestListByUse(t *testing.T) {
	f := newFixture(t)
	var items []any
	for i := 0; i < 5; i++ {
		items = append(items, reg(manifest(fmt.Sprintf("t%d.tool", i))))
	}
	items = append(items, reg(manifest("hidden.tool", func(m map[string]any) { m["requiredPermission"] = "admin" })))
	if r := f.do(http.MethodPost, "/api/v1/tools/batch-register", map[string]any{"tools": items}); r.Code != http.StatusOK {
		t.Fatal(r.Raw)
	}
	var events []graph.UsageEvent
	for id, n := range map[string]int{"t3.tool": 3, "t1.tool": 2, "hidden.tool": 9} {
		for range n {
			events = append(events, graph.UsageEvent{ToolID: id, Success: true, At: time.Now()})
		}
	}
	if err := f.store.RecordUsage(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		r := f.do(http.MethodGet, "/api/v1/tools?sort=uses&limit=2&cursor="+cursor, nil, "Authorization", f.bearer(identity.NewKey{Owner: "ana", Level: "user"}))
		var p tools.UsePage
		r.data(t, &p)
		for _, it := range p.Items {
			seen = append(seen, fmt.Sprintf("%s:%d", it.ID, it.Uses))
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if got := strings.Join(seen, " "); got != "t3.tool:3 t1.tool:2 t0.tool:0 t2.tool:0 t4.tool:0" {
		t.Fatalf("by use: %s", got)
	}
}

// TestCoexistsWithRetrievalRoutes registers the static routes the retrieval
// package adds beside :toolId and checks both sides still route.
func TestCoexistsWithRetrievalRoutes(t *testing.T) {
	dummy := httpx.MountFunc(func(v1 *gin.RouterGroup) {
		v1.GET("/tools/retrieval/search", func(c *gin.Context) { httpx.OK(c, http.StatusOK, "search") })
		v1.GET("/tools/retrieval/manifest/:toolId", func(c *gin.Context) { httpx.OK(c, http.StatusOK, "manifest "+c.Param("toolId")) })
		v1.POST("/tools/search", func(c *gin.Context) { httpx.OK(c, http.StatusOK, "post search") })
	})
	f := newFixture(t, dummy)
	f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("fx.convert")))
	f.do(http.MethodPost, "/api/v1/tools/register", reg(manifest("search")))

	tests := []struct {
		method, path string
		status       int
		data         string
	}{
		{http.MethodGet, "/api/v1/tools/retrieval/search", http.StatusOK, `"search"`},
		{http.MethodGet, "/api/v1/tools/retrieval/manifest/fx.convert", http.StatusOK, `"manifest fx.convert"`},
		{http.MethodPost, "/api/v1/tools/search", http.StatusOK, `"post search"`},
		{http.MethodGet, "/api/v1/tools/fx.convert", http.StatusOK, ""},
		{http.MethodGet, "/api/v1/tools/search", http.StatusOK, ""}, // a tool named "search"
		{http.MethodGet, "/api/v1/tools/fx.convert/history", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := f.do(tt.method, tt.path, nil)
			if r.Code != tt.status {
				t.Fatalf("got %d %s", r.Code, r.Raw)
			}
			if tt.data != "" && string(r.Body.Data) != tt.data {
				t.Fatalf("data %s, want %s", r.Body.Data, tt.data)
			}
		})
	}
}

func TestUpdateKeepsOmittedUseCases(t *testing.T) {
	f := newFixture(t)
	body := reg(manifest("fx.keep"))
	body["useCases"] = []string{"change dollars into euros"}
	if r := f.do(http.MethodPost, "/api/v1/tools/register", body); r.Code != http.StatusCreated {
		t.Fatalf("register: %d %s", r.Code, r.Raw)
	}
	useCases := func() []string {
		var rec struct {
			UseCases []string `json:"useCases"`
		}
		f.do(http.MethodGet, "/api/v1/tools/fx.keep", nil).data(t, &rec)
		return rec.UseCases
	}
	// PUT with only the manifest keeps the use cases it does not mention.
	m := manifest("fx.keep", func(m map[string]any) { m["name"] = "Convert money" })
	if r := f.do(http.MethodPut, "/api/v1/tools/fx.keep", reg(m)); r.Code != http.StatusOK {
		t.Fatalf("update: %d %s", r.Code, r.Raw)
	}
	if got := useCases(); len(got) != 1 || got[0] != "change dollars into euros" {
		t.Fatalf("use cases after a manifest-only PUT: %v", got)
	}
	// An explicit empty list clears them.
	m["useCases"] = []string{}
	if r := f.do(http.MethodPut, "/api/v1/tools/fx.keep", reg(m)); r.Code != http.StatusOK {
		t.Fatalf("update: %d %s", r.Code, r.Raw)
	}
	if got := useCases(); len(got) != 0 {
		t.Fatalf("use cases after clearing: %v", got)
	}
}

// TestWritesFollowVisibility: an admin that may not see a tool (it needs
// a role the key lacks) can neither change nor retire it, and learns no
// more than it would of an unknown id; the tool is left as it was.
func TestWritesFollowVisibility(t *testing.T) {
	f := newFixture(t)
	f.do(http.MethodPost, "/api/v1/tools/batch-register", map[string]any{"tools": []any{
		reg(manifest("role.tool", func(m map[string]any) { m["permissionsRequired"] = []string{"role:ops"} })),
	}})
	admin := f.bearer(identity.NewKey{Level: "admin"})
	ops := f.bearer(identity.NewKey{Level: "admin", Roles: []string{"ops"}})
	open := manifest("role.tool") // no role: would make the tool public
	for _, w := range []struct {
		name, method, path string
		body               any
	}{
		{"update", http.MethodPut, "/api/v1/tools/role.tool", reg(manifest("role.tool", func(m map[string]any) { delete(m, "toolId") }))},
		{"deprecate", http.MethodDelete, "/api/v1/tools/role.tool?reason=probe", nil},
	} {
		hidden := f.do(w.method, w.path, w.body, "Authorization", admin)
		unknown := f.do(w.method, strings.ReplaceAll(w.path, "role.tool", "zz.unknown"), w.body, "Authorization", admin)
		if hidden.Code != http.StatusNotFound || unknown.Code != http.StatusNotFound {
			t.Fatalf("%s of a hidden tool: %d %s (unknown: %d)", w.name, hidden.Code, hidden.Raw, unknown.Code)
		}
		if norm := strings.ReplaceAll(unknown.Body.Error.Message, "zz.unknown", "role.tool"); norm != hidden.Body.Error.Message {
			t.Fatalf("%s: hidden and unknown differ: %q vs %q", w.name, hidden.Raw, unknown.Raw)
		}
	}
	r := f.do(http.MethodPost, "/api/v1/tools/batch-register", map[string]any{"upsert": true, "tools": []any{reg(open)}}, "Authorization", admin)
	if !strings.Contains(r.Raw, `"status":"failed"`) || !strings.Contains(r.Raw, "already exists") {
		t.Fatalf("upsert over a hidden tool: %d %s", r.Code, r.Raw)
	}
	got := f.do(http.MethodGet, "/api/v1/tools/role.tool", nil, "Authorization", ops)
	if got.Code != http.StatusOK || !strings.Contains(got.Raw, "role:ops") || !strings.Contains(got.Raw, `"status":"active"`) {
		t.Fatalf("the tool changed: %d %s", got.Code, got.Raw)
	}
	// A caller that may see it still can change it.
	if r := f.do(http.MethodDelete, "/api/v1/tools/role.tool?reason=retired", nil, "Authorization", ops); r.Code != http.StatusOK {
		t.Fatalf("deprecate by a caller who sees it: %d %s", r.Code, r.Raw)
	}
}
