package retrieval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

// catBenchTools is the catalogue BenchmarkSearchAfterRegistration searches.
const catBenchTools = 20000

// catBenchStore builds a store of n synthetic tools in a temp dir (removed
// by the benchmark's cleanup).
func catBenchStore(b *testing.B, n int) *sqlite.Store {
	b.Helper()
	benchCatalogue(b) // fills benchVocab
	dir := b.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, "graph.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close(); _ = os.RemoveAll(dir) })
	ctx := context.Background()
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: benchEmb.Name(), Dimension: benchEmb.Dim}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var batch []graph.Tool
	for i := range n {
		batch = append(batch, catBenchTool(r, fmt.Sprintf("cat.t%06d", i), i))
		if len(batch) == 500 || i == n-1 {
			if _, err := st.UpsertTools(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return st
}

func catBenchTool(r *rand.Rand, id string, i int) graph.Tool {
	m := retrievaltest.Manifest(id, "DO_"+strings.ToUpper(benchVocab[r.IntN(600)]), fmt.Sprintf("cat%d", i%20), benchWords(r, 25))
	m.Tags = strings.Fields(benchWords(r, 3))
	vec, _ := benchEmb.EmbedQuery(context.Background(), tool.EmbeddingText(m))
	m.ShortDescription = m.Description[:40]
	m.Status = graph.StatusActive
	return tool.ToGraph(m, vec)
}

// BenchmarkSearchAfterRegistration20k measures the first search after a
// tool registration (the registry's change hook, Invalidate, then a
// search; the registration itself is not timed) over 20,000 tools, with
// the result cache off. "unchanged" is the same search with no
// registration before it: the difference is what a change costs the
// next search (vocabulary and catalogue upkeep).
func BenchmarkSearchAfterRegistration20k(b *testing.B) {
	st := catBenchStore(b, catBenchTools)
	qs := benchQueries(64)
	ctx := context.Background()
	caller := access.Caller{UserID: "u", SessionID: "bench"}
	for _, register := range []bool{false, true} {
		name := "unchanged"
		if register {
			name = "after-registration"
		}
		b.Run(name, func(b *testing.B) {
			svc := retrieval.New(st, benchEmb, retrieval.Options{CacheSize: -1})
			for _, q := range qs { // warm the embedding LRU and the catalogue
				if _, err := svc.Search(ctx, retrieval.Query{Text: q, Caller: caller}); err != nil {
					b.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(7, 8))
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if register {
					b.StopTimer()
					id := fmt.Sprintf("cat.new%06d", i)
					if _, err := st.UpsertTool(ctx, catBenchTool(r, id, i)); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					svc.Invalidate(id)
				}
				start := time.Now()
				if _, err := svc.Search(ctx, retrieval.Query{Text: qs[i%len(qs)], Caller: caller}); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, durs)
		})
	}
}

// BenchmarkCatalogueHeap measures what a warm catalogue holds over
// 20,000 tools: the live heap after WarmCatalogue minus before (with the
// store open and warm), in MB, and the time to list it once.
//
//	go test ./retrieval -run '^$' -bench CatalogueHeap -benchtime 3x
func BenchmarkCatalogueHeap(b *testing.B) {
	st := catBenchStore(b, catBenchTools)
	ctx := context.Background()
	caller := access.Caller{UserID: "u"}
	var svc *retrieval.Service
	var before, after runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		svc = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		svc = retrieval.New(st, benchEmb, retrieval.Options{CacheSize: -1})
		if err := svc.WarmCatalogue(ctx, caller); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	b.StopTimer()
	runtime.KeepAlive(svc)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "catalogue-MB")
}

// readCounter counts the store reads a catalogue build makes.
type readCounter struct {
	graph.Store
	gets, bulk int
}

func (c *readCounter) GetTool(ctx context.Context, id string) (graph.Tool, error) {
	c.gets++
	return c.Store.GetTool(ctx, id)
}

func (c *readCounter) ManifestRunes(ctx context.Context) (map[string]int, error) {
	c.bulk++
	return c.Store.ManifestRunes(ctx)
}

// BenchmarkFirstCatalogue20k measures what a restart costs the catalogue
// over 20,000 tools: a fresh Service's WarmCatalogue ("warm-up"), and a
// fresh Service's first search with no warm-up ("first-search", the
// search also builds the vocabulary and ranks), with the store's reads
// per operation (manifests read one by one, bulk reads).
//
//	go test ./retrieval -run '^$' -bench FirstCatalogue20k -benchtime 5x
func BenchmarkFirstCatalogue20k(b *testing.B) {
	st := catBenchStore(b, catBenchTools)
	ctx := context.Background()
	caller := access.Caller{UserID: "u", SessionID: "bench"}
	q := benchQueries(1)[0]
	for _, name := range []string{"warm-up", "first-search"} {
		b.Run(name, func(b *testing.B) {
			rc := &readCounter{Store: st}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				svc := retrieval.New(rc, benchEmb, retrieval.Options{CacheSize: -1})
				start := time.Now()
				var err error
				if name == "warm-up" {
					err = svc.WarmCatalogue(ctx, caller)
				} else {
					_, err = svc.Search(ctx, retrieval.Query{Text: q, Caller: caller})
				}
				if err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, durs)
			b.ReportMetric(float64(rc.gets)/float64(b.N), "gets/op")
			b.ReportMetric(float64(rc.bulk)/float64(b.N), "bulk-reads/op")
		})
	}
}
