package sqlite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/cputime"
)

// Benchmarks run against one store of benchTools synthetic tools with
// benchDim-dimensional random unit vectors, built once per test process.
const (
	benchTools = 10000
	benchDim   = 512
)

var (
	benchOnce  sync.Once
	benchStore *Store
	benchDir   string
	benchErr   error
	benchSeq   int // ids for tools the upsert benchmarks add
	benchMu    sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchStore != nil {
		benchStore.Close()
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

var (
	// The vocabulary is sized like a real catalogue of 10,000 tools: 40
	// verbs × 150 objects (6,000 distinct verb phrases), so a typical object
	// word occurs in about 2-3% of the tools, a verb word in about 3-5%.
	benchVerbs = strings.Fields(`convert book reserve search list create delete update get send schedule cancel
		translate summarize calculate upload download validate compare track approve archive assign audit
		export import merge monitor notify publish refund rename render resize restore rotate share sync tag verify`)
	benchObjects = strings.Fields(`currency flight hotel table weather file meeting invoice email document payment
		shipment contact ticket report image recipe stock route calendar account address alert appointment
		article asset badge balance bill blog booking budget bug build campaign candidate car cart certificate
		channel chart claim class client comment commit company contract coupon course customer dashboard
		dataset deal delivery deployment device discount domain donation driver employee event expense feedback
		folder form forecast fund game goal grant group incident inventory issue job journal label lead lease
		lesson license list loan location log loyalty map menu message metric milestone order package parcel
		passport password patient photo playlist podcast policy portfolio post price product profile project
		prescription quote receipt record refund reminder rental request reservation review salary sample seat
		secret server session shift signature site song subscription supplier survey task tax team template
		tenant timesheet transaction transfer trip user vehicle vendor video visa vote warehouse webhook workflow`)
	benchCategories = []string{"finance", "travel", "dining", "weather", "files", "productivity", "communication",
		"commerce", "knowledge", "developer", "media", "logistics"}
	benchTags = []string{"fast", "realtime", "batch", "secure", "public", "internal", "beta", "popular", "legacy",
		"international", "mobile", "enterprise", "free", "premium", "cached"}
	benchEntities = []graph.EntityRef{
		{Name: "Southwest", Type: "Airline"}, {Name: "Delta", Type: "Airline"}, {Name: "Lufthansa", Type: "Airline"},
		{Name: "Euro", Type: "Currency"}, {Name: "Yen", Type: "Currency"}, {Name: "Dollar", Type: "Currency"},
		{Name: "Paris", Type: "City"}, {Name: "Tokyo", Type: "City"}, {Name: "Denver", Type: "City"},
		{Name: "OpenTable", Type: "Platform"}, {Name: "Google Drive", Type: "Platform"}, {Name: "Slack", Type: "Platform"},
	}
	benchFiller = []string{"quickly", "securely", "for a user", "with retries", "using the partner API", "in bulk",
		"across regions", "with audit logging", "at the current rate", "for a given date", "and returns a summary",
		"with optional filters", "respecting quotas", "from the workspace", "by name or id"}
)

func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return graph.Normalize(v)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// benchTool builds the i-th synthetic tool.
func benchTool(r *rand.Rand, id string) graph.Tool {
	verb, obj := pick(r, benchVerbs), pick(r, benchObjects)
	desc := fmt.Sprintf("%s a %s %s %s. Works %s and %s; handles %s and %s records.",
		strings.ToUpper(verb[:1])+verb[1:], obj, pick(r, benchFiller), pick(r, benchFiller),
		pick(r, benchFiller), pick(r, benchFiller), pick(r, benchObjects), pick(r, benchObjects))
	t := graph.Tool{
		ToolSummary: graph.ToolSummary{
			ID: id, Verb: strings.ToUpper(verb + "_" + obj), Name: strings.ToUpper(obj[:1]) + obj[1:] + " " + verb,
			ShortDescription: desc[:min(len(desc), 100)], Category: pick(r, benchCategories),
			Tags: []string{pick(r, benchTags), pick(r, benchTags)}, Groups: []string{"default"},
			Permissions: []string{"public"}, Status: graph.StatusActive, Module: "mod" + fmt.Sprint(r.IntN(8)),
			RequiredParams: []string{obj + "Id"}, OptionalParams: []string{"limit"},
		},
		Description: desc,
		UseCases:    []string{verb + " " + obj + " " + pick(r, benchFiller)},
		Entities:    []graph.EntityRef{pick(r, benchEntities)},
		Relations:   []graph.Relation{{Kind: graph.RelPairsWith, Target: fmt.Sprintf("bench.%05d", r.IntN(benchTools)), Score: r.Float64()}},
		Embedding:   randUnit(r, benchDim),
		Manifest:    []byte(fmt.Sprintf(`{"toolId":%q,"verb":%q,"description":%q}`, id, verb, desc)),
	}
	if t.Tags[0] == t.Tags[1] {
		t.Tags = t.Tags[:1]
	}
	return t
}

// fixture returns the shared 10,000-tool store.
func fixture(b *testing.B) *Store {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "toolsmith-bench-")
		if benchErr != nil {
			return
		}
		benchStore, benchErr = Open(filepath.Join(benchDir, "bench.db"), Options{})
		if benchErr != nil {
			return
		}
		ctx := context.Background()
		if benchErr = benchStore.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "bench-random", Dimension: benchDim}); benchErr != nil {
			return
		}
		r := rand.New(rand.NewPCG(1, 2))
		start := time.Now()
		batch := make([]graph.Tool, 0, 500)
		for i := 0; i < benchTools; i++ {
			batch = append(batch, benchTool(r, fmt.Sprintf("bench.%05d", i)))
			if len(batch) == cap(batch) {
				if _, benchErr = benchStore.UpsertTools(ctx, batch); benchErr != nil {
					return
				}
				batch = batch[:0]
			}
		}
		fmt.Fprintf(os.Stderr, "bench fixture: %d tools in %v\n", benchTools, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatalf("fixture: %v", benchErr)
	}
	return benchStore
}

// reportPercentiles adds p50/p95 (milliseconds) of the per-op durations.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(d)))) - 1
		return float64(d[max(i, 0)].Nanoseconds()) / 1e6
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}

// cpuMeter reports the process CPU time per op between start and stop.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuMeter {
	d, ok := cputime.Process()
	return cpuMeter{start: d, ok: ok}
}

func (c cpuMeter) report(b *testing.B) {
	end, ok := cputime.Process()
	if !c.ok || !ok || b.N == 0 {
		return
	}
	b.ReportMetric(float64((end-c.start).Nanoseconds())/1e6/float64(b.N), "cpu-ms/op")
}

func BenchmarkVectorSearch(b *testing.B) {
	s := fixture(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = randUnit(r, benchDim)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		hits, err := s.VectorSearch(ctx, queries[i%len(queries)], 10, graph.Filter{})
		durs = append(durs, time.Since(t0))
		if err != nil || len(hits) != 10 {
			b.Fatalf("VectorSearch: %d hits, %v", len(hits), err)
		}
	}
	b.StopTimer()
	cpu.report(b)
	reportPercentiles(b, durs)
}

func BenchmarkTextSearch(b *testing.B) {
	s := fixture(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	queries := make([]string, 64)
	for i := range queries {
		switch i % 4 {
		case 0:
			queries[i] = pick(r, benchVerbs) + " " + pick(r, benchObjects)
		case 1:
			queries[i] = "I need to " + pick(r, benchVerbs) + " a " + pick(r, benchObjects) + " " + pick(r, benchFiller)
		case 2:
			queries[i] = strings.ToUpper(pick(r, benchVerbs) + "_" + pick(r, benchObjects))
		default:
			queries[i] = pick(r, benchEntities).Name + " " + pick(r, benchObjects)
		}
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		hits, err := s.TextSearch(ctx, queries[i%len(queries)], 10, graph.Filter{})
		durs = append(durs, time.Since(t0))
		if err != nil || len(hits) == 0 {
			b.Fatalf("TextSearch(%q): %d hits, %v", queries[i%len(queries)], len(hits), err)
		}
	}
	b.StopTimer()
	cpu.report(b)
	reportPercentiles(b, durs)
}

func nextBenchIDs(n int) []string {
	benchMu.Lock()
	defer benchMu.Unlock()
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("new.%07d", benchSeq)
		benchSeq++
	}
	return out
}

// BenchmarkUpsertTool measures single registrations (one transaction each)
// into the 10,000-tool store; embedding time is not included.
func BenchmarkUpsertTool(b *testing.B) {
	s := fixture(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	tools := make([]graph.Tool, b.N)
	for i, id := range nextBenchIDs(b.N) {
		tools[i] = benchTool(r, id)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := s.UpsertTool(ctx, tools[i]); err != nil {
			b.Fatalf("UpsertTool: %v", err)
		}
		durs = append(durs, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tools/s")
	reportPercentiles(b, durs)
}

// BenchmarkUpsertToolsBatch measures batches of 100 registrations in one
// transaction each; one op is one batch.
func BenchmarkUpsertToolsBatch(b *testing.B) {
	const size = 100
	s := fixture(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	batches := make([][]graph.Tool, b.N)
	for i := range batches {
		for _, id := range nextBenchIDs(size) {
			batches[i] = append(batches[i], benchTool(r, id))
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := s.UpsertTools(ctx, batches[i]); err != nil {
			b.Fatalf("UpsertTools: %v", err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N*size)/elapsed.Seconds(), "tools/s")
}

// follower opens a second Store on the fixture's file, as another process
// (an API replica, a worker) opens it, caught up with it.
func follower(b *testing.B) *Store {
	b.Helper()
	fixture(b)
	f, err := Open(filepath.Join(benchDir, "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	if _, err := f.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkRefreshIdle measures what following another process costs
// every second when it wrote nothing: one Refresh over the 10,000-tool
// file.
func BenchmarkRefreshIdle(b *testing.B) {
	f := follower(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ids, err := f.Refresh(ctx); err != nil || len(ids) != 0 {
			b.Fatalf("Refresh = %v, %v", ids, err)
		}
	}
}

// BenchmarkRefreshApply10 measures one Refresh that applies ten tools
// another Store registered (their vectors, text and summaries); the
// registrations are not timed.
func BenchmarkRefreshApply10(b *testing.B) {
	const size = 10
	s, f := fixture(b), follower(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 12))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		batch := make([]graph.Tool, 0, size)
		for _, id := range nextBenchIDs(size) {
			batch = append(batch, benchTool(r, id))
		}
		if _, err := s.UpsertTools(ctx, batch); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if ids, err := f.Refresh(ctx); err != nil || len(ids) != size {
			b.Fatalf("Refresh = %d ids, %v; want %d", len(ids), err, size)
		}
	}
}

// BenchmarkTextIndexGC is what the text index of 100,000 tools costs the
// garbage collector: one full collection (ns/op) with the index live, and
// the heap it holds (MB). The collector marks everything reachable on every
// cycle, so a pointer per posting is paid again and again.
func BenchmarkTextIndexGC(b *testing.B) {
	ctx := context.Background()
	x := newTextIndex()
	var err error
	if x.tok, err = openTokenizer(ctx); err != nil {
		b.Fatal(err)
	}
	defer x.tok.close()
	r := rand.New(rand.NewPCG(7, 8))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	docs := make([]docText, 0, 1000)
	for i := 1; i <= 100000; i++ {
		t := benchTool(r, fmt.Sprintf("bench.%06d", i))
		docs = append(docs, docText{rowid: int64(i), id: t.ID, cols: [len(ftsColumns)]string{t.Name, t.Verb, t.Description, strings.Join(t.Tags, " "), strings.Join(t.UseCases, " "), ""}})
		if len(docs) == cap(docs) {
			x.put(ctx, docs)
			docs = docs[:0]
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
	}
	b.StopTimer()
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB")
	runtime.KeepAlive(x)
}

// BenchmarkNoticesFollowIdle is what following a topic costs each process
// every graph.FollowEvery when nothing was posted: one NoticesAfter over a
// topic holding its full retention (1,000 notices) beside another topic.
func BenchmarkNoticesFollowIdle(b *testing.B) {
	s := openBenchNotices(b)
	ctx := context.Background()
	top, err := s.LatestNotices(ctx, "a", 1)
	if err != nil || len(top) != 1 {
		b.Fatalf("latest = %v, %v", top, err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got, err := s.NoticesAfter(ctx, "a", top[0].Seq, 0); err != nil || len(got) != 0 {
			b.Fatalf("NoticesAfter = %v, %v", got, err)
		}
	}
}

// BenchmarkPostNotice is one notification (or cache invalidation) written
// to a topic at its retention: the insert and the trim, in one
// transaction.
func BenchmarkPostNotice(b *testing.B) {
	s := openBenchNotices(b)
	ctx := context.Background()
	data := []byte(`{"kind":"soft_budget","subject":"pets","message":"pets has spent 1.00 of its 1.00 soft budget"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.PostNotice(ctx, graph.Notice{Topic: "a", Data: data}, graph.DefaultNoticeKeep); err != nil {
			b.Fatal(err)
		}
	}
}

func openBenchNotices(b *testing.B) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "n.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	ns := make([]graph.Notice, 0, 2*graph.DefaultNoticeKeep)
	for i := 0; i < graph.DefaultNoticeKeep; i++ {
		ns = append(ns, graph.Notice{Topic: "a", Data: []byte(`{"i":1}`)}, graph.Notice{Topic: "b", Data: []byte(`{"i":2}`)})
	}
	if _, err := s.ImportNotices(ctx, "bench", ns, graph.DefaultNoticeKeep); err != nil {
		b.Fatal(err)
	}
	return s
}

// openTools is the catalogue BenchmarkOpen opens: the size the scale-out
// targets are set at.
const openTools = 100000

// BenchmarkOpen is a restart at 100,000 tools: Open (the summaries and
// vectors into the memory index) and the text index's background load,
// to its end. It reports the live heap after the load (MB-live), the most
// the Go runtime held from the OS meanwhile (MB-peak: what the resident
// set follows) and allocations per restart (-benchmem). The store is built
// once, into TOOLSMITH_BENCH_OPEN_DIR when set (and kept there for the
// next run), else into a temporary folder.
func BenchmarkOpen(b *testing.B) {
	path := openFixture(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		debug.FreeOSMemory()
		stop := make(chan struct{})
		peak := make(chan uint64)
		go func() { peak <- heldPeak(stop) }()
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.text.wait()
		close(stop)
		held := <-peak
		b.StopTimer()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "MB-live")
		b.ReportMetric(float64(held)/(1<<20), "MB-peak")
		if s.mem.len() != openTools {
			b.Fatalf("opened %d tools, want %d", s.mem.len(), openTools)
		}
		s.Close()
		b.StartTimer()
	}
}

// heldPeak samples the memory the Go runtime holds from the OS (mapped and
// not released) every millisecond until stop, and returns the most seen.
func heldPeak(stop <-chan struct{}) uint64 {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var most uint64
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		metrics.Read(samples)
		most = max(most, samples[0].Value.Uint64()-samples[1].Value.Uint64())
		select {
		case <-stop:
			return most
		case <-t.C:
		}
	}
}

// openFixture returns the path of a store of openTools synthetic tools,
// building it when it does not exist yet.
func openFixture(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("TOOLSMITH_BENCH_OPEN_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("open%d.db", openTools))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp := path + ".building"
	os.Remove(tmp)
	s, err := Open(tmp, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "bench-random", Dimension: benchDim}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	batch := make([]graph.Tool, 0, 500)
	for i := 0; i < openTools; i++ {
		batch = append(batch, benchTool(r, fmt.Sprintf("bench.%06d", i)))
		if len(batch) == cap(batch) {
			if _, err := s.UpsertTools(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	for _, ext := range []string{"-wal", "-shm"} {
		os.Remove(tmp + ext)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkListAll pages through the 100,000-tool store of BenchmarkOpen
// as a search's first catalogue listing does (pages of 1,000, a visibility
// test in Go), once per op.
func BenchmarkListAll(b *testing.B) {
	s, err := Open(openFixture(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.text.wait()
	ctx := context.Background()
	allow := func(t *graph.ToolSummary) bool { return !slices.Contains(t.Permissions, "secret") }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n, after := 0, ""
		for {
			page, err := s.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000, Filter: graph.Filter{Allow: allow}})
			if err != nil {
				b.Fatal(err)
			}
			n += len(page.Items)
			if page.Next == "" {
				break
			}
			after = page.Next
		}
		if n != openTools {
			b.Fatalf("listed %d tools, want %d", n, openTools)
		}
	}
}
