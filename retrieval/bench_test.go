package retrieval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

// The benchmark catalogue: 10,000 synthetic tools over a 600-word
// vocabulary, 512-d word-hashing vectors (USE-Lite's dimension), built once
// per test binary in a temp dir.
const benchTools = 10000

var (
	benchOnce  sync.Once
	benchStore *sqlite.Store
	benchDir   string
	benchErr   error
	benchEmb   = retrievaltest.Words{Dim: 512}
	benchVocab []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchStore != nil {
		_ = benchStore.Close()
	}
	if benchDir != "" {
		_ = os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchWords(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = benchVocab[r.IntN(len(benchVocab))]
	}
	return strings.Join(w, " ")
}

func benchCatalogue(b *testing.B) *sqlite.Store {
	benchOnce.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 600; i++ {
			benchVocab = append(benchVocab, fmt.Sprintf("w%03dx", i))
		}
		benchDir, benchErr = os.MkdirTemp("", "retrieval-bench-*")
		if benchErr != nil {
			return
		}
		benchStore, benchErr = sqlite.Open(filepath.Join(benchDir, "graph.db"), sqlite.Options{})
		if benchErr != nil {
			return
		}
		ctx := context.Background()
		if benchErr = benchStore.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: benchEmb.Name(), Dimension: benchEmb.Dim}); benchErr != nil {
			return
		}
		var batch []graph.Tool
		for i := 0; i < benchTools; i++ {
			m := retrievaltest.Manifest(fmt.Sprintf("bench.t%05d", i), "DO_"+strings.ToUpper(benchVocab[r.IntN(600)]), fmt.Sprintf("cat%d", i%20), benchWords(r, 25))
			m.Tags = strings.Fields(benchWords(r, 3))
			if i%7 == 0 {
				m.Entities = []tool.Entity{{Name: "Ent" + benchVocab[r.IntN(600)], Type: "Kind" + fmt.Sprint(i%5)}}
			}
			vec, _ := benchEmb.EmbedQuery(ctx, tool.EmbeddingText(m))
			m.ShortDescription = m.Description[:40]
			m.Status = graph.StatusActive
			batch = append(batch, tool.ToGraph(m, vec))
			if len(batch) == 500 {
				if _, benchErr = benchStore.UpsertTools(ctx, batch); benchErr != nil {
					return
				}
				batch = batch[:0]
			}
		}
		// Usage evidence on a tenth of the tools.
		var evs []graph.UsageEvent
		for i := 0; i < benchTools; i += 10 {
			q := benchWords(r, 6)
			v, _ := benchEmb.EmbedQuery(ctx, q)
			evs = append(evs, graph.UsageEvent{ToolID: fmt.Sprintf("bench.t%05d", i), Query: q, QueryEmbedding: v, Success: true, SessionID: "bench", At: time.Now()})
		}
		benchErr = benchStore.RecordUsage(ctx, evs)
	})
	if benchErr != nil {
		b.Fatalf("bench catalogue: %v", benchErr)
	}
	return benchStore
}

func benchQueries(n int) []string {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]string, n)
	for i := range out {
		out[i] = benchWords(r, 5)
	}
	return out
}

// reportLatency adds p50/p95 (ms) to a benchmark from per-op durations.
func reportLatency(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	p := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.95), "p95-ms")
}

// BenchmarkSearch10k measures hybrid search over 10,000 tools with the
// result cache off: "rank" is ranking alone, "search" adds context assembly
// (index within budget, 5 detailed manifests with visible relationships).
// cached-embedding pre-warms the query-embedding LRU; uncached embeds every
// query (here with the cheap hashing embedder; USE-Lite adds ~30 ms).
func BenchmarkSearch10k(b *testing.B) {
	st := benchCatalogue(b)
	qs := benchQueries(256)
	ctx := context.Background()
	caller := access.Caller{UserID: "u", SessionID: "bench"}
	for _, tc := range []struct {
		name        string
		cachedEmbed bool
		assemble    bool
	}{
		{"rank/cached-embedding", true, false},
		{"rank/uncached-embedding", false, false},
		{"search/cached-embedding", true, true},
		{"search/uncached-embedding", false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			opts := retrieval.Options{CacheSize: -1}
			if !tc.cachedEmbed {
				opts.EmbedCacheSize = -1
			}
			svc := retrieval.New(st, benchEmb, opts)
			for _, q := range qs { // warm the embedding LRU and the catalogue
				if _, err := svc.Search(ctx, retrieval.Query{Text: q, Caller: caller}); err != nil {
					b.Fatal(err)
				}
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := retrieval.Query{Text: qs[i%len(qs)], Caller: caller}
				start := time.Now()
				var err error
				if tc.assemble {
					_, err = svc.Search(ctx, q)
				} else {
					_, _, err = svc.Rank(ctx, q)
				}
				if err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, durs)
		})
	}
}

// BenchmarkStore10k attributes search latency: the store calls one hybrid
// search makes, each alone (k = 50 as in ranking).
func BenchmarkStore10k(b *testing.B) {
	st := benchCatalogue(b)
	qs := benchQueries(256)
	ctx := context.Background()
	f := access.Caller{UserID: "u"}.Filter()
	vecs := make([][]float32, len(qs))
	for i, q := range qs {
		vecs[i], _ = benchEmb.EmbedQuery(ctx, q)
	}
	cases := []struct {
		name string
		fn   func(i int) error
	}{
		{"text-search", func(i int) error { _, err := st.TextSearch(ctx, qs[i%len(qs)], 50, f); return err }},
		{"vector-search", func(i int) error { _, err := st.VectorSearch(ctx, vecs[i%len(qs)], 50, f); return err }},
		{"usage-search", func(i int) error { _, err := st.UsageSearch(ctx, vecs[i%len(qs)], 50, f); return err }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			durs := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := tc.fn(i); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			reportLatency(b, durs)
		})
	}
}

// BenchmarkSearch10kParallel8 runs full searches (cached query embeddings,
// result cache off) from 8 concurrent clients and reports queries/second.
func BenchmarkSearch10kParallel8(b *testing.B) {
	st := benchCatalogue(b)
	qs := benchQueries(256)
	ctx := context.Background()
	caller := access.Caller{UserID: "u", SessionID: "bench"}
	svc := retrieval.New(st, benchEmb, retrieval.Options{CacheSize: -1})
	for _, q := range qs {
		if _, err := svc.Search(ctx, retrieval.Query{Text: q, Caller: caller}); err != nil {
			b.Fatal(err)
		}
	}
	var mu sync.Mutex
	next := 0
	start := time.Now()
	b.ResetTimer()
	b.SetParallelism((8 + testingProcs() - 1) / testingProcs())
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			q := qs[next%len(qs)]
			next++
			mu.Unlock()
			if _, err := svc.Search(ctx, retrieval.Query{Text: q, Caller: caller}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "queries/s")
}

func testingProcs() int { return runtime.GOMAXPROCS(0) }

// BenchmarkRecordUsage10k is what one execution's learning costs over
// 10,000 tools (the execute activity's retrieval.Service.RecordUsage): a
// query the run searched before (its embedding cached), the write, the
// centroid, the memory's read-back and the session's pairings. It writes
// to the shared catalogue, so it runs after the searches.
func BenchmarkRecordUsage10k(b *testing.B) {
	st := benchCatalogue(b)
	qs := benchQueries(64)
	ctx := context.Background()
	svc := retrieval.New(st, benchEmb, retrieval.Options{})
	caller := access.Caller{UserID: "u", SessionID: "bench-record"}
	for _, q := range qs {
		if _, err := svc.Search(ctx, retrieval.Query{Text: q, Caller: caller}); err != nil {
			b.Fatal(err)
		}
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev := graph.UsageEvent{ToolID: fmt.Sprintf("bench.t%05d", (i*37)%benchTools), SessionID: caller.SessionID, UserID: caller.UserID,
			Query: qs[i%len(qs)], Success: true}
		start := time.Now()
		if err := svc.RecordUsage(ctx, []graph.UsageEvent{ev}); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, durs)
}

// BenchmarkHistory10k is hybrid ranking over 10,000 tools as the usage
// history grows to 100,000 events (Zipf-skewed over the tools, queries of
// six catalogue words, sessions of four): each sub-benchmark first records
// events up to its count, then ranks never-seen queries with a fresh
// service (its usage memory read back from the store, as after a restart).
// The memory of past queries is a bounded ring (Options.Exemplars), so
// p95 should stay flat past its size. It writes to the shared catalogue,
// so it runs last.
func BenchmarkHistory10k(b *testing.B) {
	st := benchCatalogue(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(29, 100))
	zipf := rand.NewZipf(r, 1.1, 10, benchTools-1)
	recorded := 0
	qs := benchQueries(512)
	caller := access.Caller{UserID: "u", SessionID: "bench-history"}
	for _, total := range []int{1000, 20000, 100000} {
		b.Run(fmt.Sprintf("events=%d", total), func(b *testing.B) {
			rec := retrieval.New(st, benchEmb, retrieval.Options{CacheSize: -1})
			for recorded < total {
				n := min(5000, total-recorded)
				evs := make([]graph.UsageEvent, n)
				for i := range evs {
					evs[i] = graph.UsageEvent{ToolID: fmt.Sprintf("bench.t%05d", zipf.Uint64()), SessionID: fmt.Sprintf("h%d", (recorded+i)/4),
						UserID: "u", Query: benchWords(r, 6), Success: true}
				}
				if err := rec.RecordUsage(ctx, evs); err != nil {
					b.Fatal(err)
				}
				recorded += n
			}
			svc := retrieval.New(st, benchEmb, retrieval.Options{CacheSize: -1})
			if _, _, err := svc.Rank(ctx, retrieval.Query{Text: "warm up", Caller: caller}); err != nil {
				b.Fatal(err)
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, _, err := svc.Rank(ctx, retrieval.Query{Text: qs[i%len(qs)], Caller: caller}); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, durs)
		})
	}
}
