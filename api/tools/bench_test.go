package tools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/tools"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/embed/use"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/registry"
)

func benchHandler(b *testing.B, emb ...embed.Model) http.Handler {
	b.Helper()
	var model embed.Model = hashing.New(0)
	if len(emb) > 0 {
		model = emb[0]
	}
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := registry.New(st, model)
	keys := identity.NewKeyService(identitytest.NewMem())
	bearer := identitytest.Bearer(b, keys, identity.NewKey{Level: "admin"})
	h := api.New(api.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Auth: &identity.Authenticator{Keys: keys}}, tools.New(svc)).Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", bearer)
		h.ServeHTTP(w, r)
	})
}

func post(b *testing.B, h http.Handler, path string, body any, want int) {
	raw, err := json.Marshal(body)
	if err != nil {
		b.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw)))
	if rec.Code != want {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
}

// BenchmarkRegisterHTTP measures single registrations through the whole
// HTTP path (decode, validate, embed with the hashing embedder, SQLite write).
func BenchmarkRegisterHTTP(b *testing.B) {
	h := benchHandler(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		post(b, h, "/api/v1/tools/register", reg(manifest(fmt.Sprintf("bench.t%d", i))), http.StatusCreated)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "registrations/s")
}

// BenchmarkBatchRegisterHTTP measures batch registration of 100 tools per
// request through the HTTP path.
func BenchmarkBatchRegisterHTTP(b *testing.B) {
	const batch = 100
	h := benchHandler(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		items := make([]any, batch)
		for j := range items {
			items[j] = reg(manifest(fmt.Sprintf("bench.b%d_%d", i, j)))
		}
		post(b, h, "/api/v1/tools/batch-register", map[string]any{"tools": items}, http.StatusOK)
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "registrations/s")
}

// BenchmarkRegisterHTTPUSELite is BenchmarkRegisterHTTP with the built-in
// USE-Lite embedder, from TOOLSMITH_MODEL_DIR (set by `make bench`).
func BenchmarkRegisterHTTPUSELite(b *testing.B) {
	dir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if dir == "" {
		b.Skip("TOOLSMITH_MODEL_DIR not set; run through `make bench`")
	}
	m, err := use.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	h := benchHandler(b, m)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		post(b, h, "/api/v1/tools/register", reg(manifest(fmt.Sprintf("bench.u%d", i))), http.StatusCreated)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "registrations/s")
}
