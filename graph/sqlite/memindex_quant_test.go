package sqlite

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

// TestScanQuantMatchesFloatScan compares the quantised scan with the plain
// float32 scan (the reference: same scores, same tie order) on data built to
// stress its pruning: near-duplicates, exact duplicates, spiky vectors, rows
// without a vector, filters and an Allow that rejects the best rows.
func TestScanQuantMatchesFloatScan(t *testing.T) {
	type dataset struct {
		name string
		dim  int
		vec  func(r *rand.Rand, i int) []float32
	}
	var base []float32
	sets := []dataset{
		{"random 512", 512, func(r *rand.Rand, i int) []float32 { return randUnit(r, 512) }},
		{"random 40 (tail)", 40, func(r *rand.Rand, i int) []float32 { return randUnit(r, 40) }},
		{"random 7", 7, func(r *rand.Rand, i int) []float32 { return randUnit(r, 7) }},
		{"clustered", 128, func(r *rand.Rand, i int) []float32 {
			if base == nil {
				base = randUnit(r, 128)
			}
			v := slices.Clone(base)
			for j := range v {
				v[j] += float32(r.NormFloat64() * 0.01)
			}
			return graph.Normalize(v)
		}},
		{"duplicates", 64, func(r *rand.Rand, i int) []float32 {
			return randUnit(rand.New(rand.NewPCG(uint64(i%7), 9)), 64)
		}},
		{"spiky", 256, func(r *rand.Rand, i int) []float32 {
			v := randUnit(r, 256)
			v[i%256] = 30
			return graph.Normalize(v)
		}},
	}
	for _, ds := range sets {
		r := rand.New(rand.NewPCG(5, 6))
		base = nil
		m := newMemIndex()
		var vecs [][]float32
		const n = 1500
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("t%04d", i)
			var v []float32
			if i%50 != 7 {
				v = ds.vec(r, i)
			}
			vecs = append(vecs, v)
			m.put(graph.ToolSummary{ID: id, Status: graph.StatusActive, Category: []string{"a", "b"}[i%2]}, v)
		}
		rejectTop := map[string]bool{}
		filters := map[string]graph.Filter{
			"none":       {},
			"category a": {Categories: []string{"a"}},
			"a few ids":  {IDs: []string{"t0003", "t0100", "t0777", "t1499", "t0007", "missing"}},
			"allow rejects the best": {Allow: func(s *graph.ToolSummary) bool {
				return !rejectTop[s.ID]
			}},
		}
		for trial := 0; trial < 6; trial++ {
			q := ds.vec(r, r.IntN(n))
			if trial%3 == 1 && vecs[trial] != nil {
				q = vecs[trial]
			}
			clear(rejectTop)
			for _, h := range refSearch(m, q, 20, newMatcher(graph.Filter{})) {
				rejectTop[h.e.sum.ID] = true
			}
			for fname, f := range filters {
				for _, k := range []int{1, 5, 10, 50, n + 10} {
					want := refSearch(m, q, k, newMatcher(f))
					got := m.search(q, k, newMatcher(f), false)
					if len(got) != len(want) {
						t.Fatalf("%s, %s, k=%d: %d hits, want %d", ds.name, fname, k, len(got), len(want))
					}
					for i := range got {
						if got[i].Tool.ID != want[i].e.sum.ID || got[i].Score != float64(want[i].score) {
							t.Fatalf("%s, %s, k=%d: hit %d = %s (%v), want %s (%v)", ds.name, fname, k, i,
								got[i].Tool.ID, got[i].Score, want[i].e.sum.ID, want[i].score)
						}
					}
				}
			}
		}
	}
}

// refSearch is the float32 scan, sorted.
func refSearch(m *memIndex, q []float32, k int, f *matcher) []scored {
	m.mu.RLock()
	defer m.mu.RUnlock()
	best := m.scan(m.entries, q, k, f, false)
	sort.Slice(best, func(i, j int) bool { return better(best[i], best[j]) })
	return best
}

// BenchmarkMemIndexScan measures the in-memory k-NN alone at 10,000 × 512:
// the quantised scan on random vectors and on clustered ones (closer to
// text embeddings, where many scores crowd near the top), and the plain
// float32 scan it replaced, for comparison. "allow" adds a caller's
// visibility check (retrieval's searches always have one) on tools with
// tags and parameters, whose entries were allocated among other objects,
// as a server's are, at 10,000 and at 100,000 tools.
//
//	go test ./graph/sqlite -run '^$' -bench MemIndexScan -benchtime 1000x
func BenchmarkMemIndexScan(b *testing.B) {
	const n, dim = benchTools, benchDim
	r := rand.New(rand.NewPCG(11, 12))
	centres := make([][]float32, 100)
	for i := range centres {
		centres[i] = randUnit(r, dim)
	}
	clustered := func() []float32 {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64()*0.03)
		}
		return graph.Normalize(v)
	}
	random := func() []float32 { return randUnit(r, dim) }
	for _, tc := range []struct {
		name  string
		gen   func() []float32
		ref   bool
		allow bool
	}{{"quantised/random", random, false, false}, {"quantised/clustered", clustered, false, false},
		{"quantised/clustered-allow", clustered, false, true},
		{"quantised/100k-clustered-allow", clustered, false, true},
		{"float32/random", random, true, false}, {"float32/clustered", clustered, true, false}} {
		b.Run(tc.name, func(b *testing.B) {
			m := newMemIndex()
			var other [][]byte
			n := n
			if strings.HasPrefix(tc.name, "quantised/100k") {
				n = 100000 // the catalogue size of the scale targets
			}
			for i := 0; i < n; i++ {
				sum := graph.ToolSummary{ID: fmt.Sprintf("t%05d", i), Status: graph.StatusActive}
				if tc.allow {
					sum.Tags, sum.RequiredParams = []string{"alpha", "beta"}, []string{"id"}
					other = append(other, make([]byte, 64+r.IntN(2048)))
				}
				m.put(sum, tc.gen())
			}
			runtime.KeepAlive(other)
			queries := make([][]float32, 64)
			for i := range queries {
				queries[i] = tc.gen()
			}
			f := newMatcher(graph.Filter{})
			if tc.allow {
				f = newMatcher(graph.Filter{Allow: func(t *graph.ToolSummary) bool { return len(t.Permissions) == 0 }})
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if tc.ref {
					m.searchWith(queries[i%len(queries)], 10, f, false, false)
				} else {
					m.search(queries[i%len(queries)], 10, f, false)
				}
				durs = append(durs, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, durs)
		})
	}
}
