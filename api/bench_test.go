package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/api"
	apiretrieval "github.com/toolsmith/toolsmith/api/retrieval"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/ratelimit"
	"github.com/toolsmith/toolsmith/retrieval"
)

// BenchmarkSearchThroughput serves GET /tools/retrieval/search over 1,000
// tools, never-seen queries, in one run: once with the server's security
// off (no authenticator, metrics or audit: every caller anonymous) and once
// with API-key authentication, metrics and the audit log on. It reports
// requests per second.
func BenchmarkSearchThroughput(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := context.Background()
	emb := hashing.New(256)
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
		b.Fatal(err)
	}
	words := []string{"flight", "hotel", "currency", "weather", "invoice", "email", "calendar", "translate", "stock", "recipe"}
	for i := 0; i < 1000; i++ {
		desc := fmt.Sprintf("%s %s service number %d", words[i%10], words[(i/10)%10], i)
		vec, _ := emb.EmbedQuery(ctx, desc)
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{
			ID: fmt.Sprintf("bench.t%04d", i), Verb: "DO_THING", Name: desc, ShortDescription: desc, Category: words[i%10],
			Status: graph.StatusActive, Permissions: []string{"public"},
		}, Description: desc, Embedding: vec}); err != nil {
			b.Fatal(err)
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var n atomic.Int64
	for _, secured := range []bool{false, true} {
		name := "security-off"
		if secured {
			name = "auth+metrics+audit"
		}
		b.Run(name, func(b *testing.B) {
			opts := api.Options{Logger: quiet}
			header := ""
			var m *metrics.Metrics
			if secured {
				keys := identity.NewKeyService(st)
				header = identitytest.Bearer(b, keys, identity.NewKey{Level: "user", Limits: graph.KeyLimits{SearchPerMinute: -1}})
				m = metrics.New()
				opts.Auth, opts.Metrics, opts.Audit = &identity.Authenticator{Keys: keys}, m, audit.New(st)
			}
			opts.Limiter = ratelimit.New(ratelimit.Config{SearchPerMinute: -1}, nil)
			svc := retrieval.New(st, emb, retrieval.Options{Observer: m})
			h := api.New(opts, apiretrieval.New(svc)).Handler()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/tools/retrieval/search?q=%s+%s+query+%d&maxTools=5", words[i%10], words[(i/7)%10], i), nil)
					if header != "" {
						req.Header.Set("Authorization", header)
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("search: %d %s", rec.Code, rec.Body)
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}
