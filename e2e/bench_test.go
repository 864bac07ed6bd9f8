package e2e

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/workflows"
)

// BenchmarkSubstituteEndToEnd measures the substitute branch through the
// whole stack: POST /api/v1/verbs?wait=30s → NovelVerbWorkflow on the
// in-process server → SearchTools (retrieval over SQLite, hashing embedder)
// → ExecuteTool → the demo currency module on httptest → the result in the
// HTTP response. It reports p50 and p95 in milliseconds (targets: 75 / 150).
func BenchmarkSubstituteEndToEnd(b *testing.B) {
	e := newEnv(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var run verbRun
		code := e.post("/api/v1/verbs?wait=30s", convertBody, &run)
		lat = append(lat, time.Since(start))
		if code != http.StatusOK || run.Result.Branch != workflows.BranchSubstitute {
			b.Fatalf("run %d: HTTP %d status %q branch %q error %q", i, code, run.Status, run.Result.Branch, run.Error)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(0, "ns/op")
}

func percentileMs(lat []time.Duration, p float64) float64 {
	slices.Sort(lat)
	return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
}

// BenchmarkMCPCallOverhead measures what the MCP edge adds to a search: the
// same ranking called in-process (retrieval.Service.Rank) and as
// kb.hybrid_search through the SDK client over Streamable HTTP
// (authentication, the rule check, audit and metrics included). It reports
// the p95 of each and their difference (target ≤ 2 ms).
func BenchmarkMCPCallOverhead(b *testing.B) {
	e := newEnv(b)
	e.serveMCP(30 * time.Second)
	cs := e.mcpSession(b, e.admin)
	ctx := context.Background()
	queries := []string{"convert currency", "time in another zone", "convert units of length", "count words in a text"}
	direct := make([]time.Duration, 0, b.N)
	viaMCP := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := queries[i%len(queries)]
		start := time.Now()
		if _, _, err := e.search.Rank(ctx, retrieval.Query{Text: q, MaxTools: 5}); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(start))
		start = time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "kb.hybrid_search", Arguments: map[string]any{"query": q, "limit": 5}})
		if err != nil || res.IsError {
			b.Fatalf("kb.hybrid_search: %v %+v", err, res)
		}
		viaMCP = append(viaMCP, time.Since(start))
	}
	b.StopTimer()
	d, m := percentileMs(direct, 0.95), percentileMs(viaMCP, 0.95)
	b.ReportMetric(d, "direct-p95-ms")
	b.ReportMetric(m, "mcp-p95-ms")
	b.ReportMetric(m-d, "overhead-p95-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkMCPConcurrentCallTool runs 50 call_tool calls at once (each a
// workflow on the in-process Temporal server calling the demo currency
// module) per iteration and reports the wall time of the batch and the p95
// of single calls.
func BenchmarkMCPConcurrentCallTool(b *testing.B) {
	e := newEnv(b)
	e.serveMCP(60 * time.Second)
	const n = 50
	sessions := make([]*sdk.ClientSession, 10)
	for i := range sessions {
		sessions[i] = e.mcpSession(b, e.admin)
	}
	var mu sync.Mutex
	var lat []time.Duration
	var batch []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var wg sync.WaitGroup
		for j := 0; j < n; j++ {
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				t0 := time.Now()
				res, err := sessions[j%len(sessions)].CallTool(context.Background(), &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{
					"toolId": "currency.convert", "arguments": map[string]any{"amount": j + 1, "from": "USD", "to": "EUR"}}})
				if err != nil || res.IsError {
					b.Errorf("call %d: %v %+v", j, err, res)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}(j)
		}
		wg.Wait()
		batch = append(batch, time.Since(start))
	}
	b.StopTimer()
	if len(lat) == 0 {
		b.Fatal("no call succeeded")
	}
	b.ReportMetric(percentileMs(batch, 0.5), "batch-of-50-ms")
	b.ReportMetric(percentileMs(lat, 0.95), "call-p95-ms")
	b.ReportMetric(0, "ns/op")
}
