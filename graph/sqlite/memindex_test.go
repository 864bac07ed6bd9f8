package sqlite

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
)

// TestMemIndexExact compares the (sharded) in-memory k-NN with a brute-force
// float64 ranking, on a matrix large enough to take the parallel path.
func TestMemIndexExact(t *testing.T) {
	const n, dim = 2100, 512
	if n*dim < parallelMinFloats {
		t.Fatal("matrix too small to exercise the parallel scan")
	}
	r := rand.New(rand.NewPCG(21, 22))
	m := newMemIndex()
	vecs := map[string][]float32{}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("t%04d", i)
		st := graph.StatusActive
		if i%10 == 0 {
			st = graph.StatusDisabled
		}
		v := randUnit(r, dim)
		vecs[id] = v
		m.put(graph.ToolSummary{ID: id, Status: st, Category: []string{"a", "b", "c"}[i%3]}, v)
	}
	// Replacing a vector in place must be seen by the next search.
	vecs["t0001"] = randUnit(r, dim)
	m.put(graph.ToolSummary{ID: "t0001", Status: graph.StatusActive, Category: "b"}, vecs["t0001"])

	allowOdd := func(ts *graph.ToolSummary) bool { return ts.ID[len(ts.ID)-1]%2 == 1 }
	for _, tc := range []struct {
		name string
		f    graph.Filter
		keep func(id string, i int) bool
	}{
		{"active", graph.Filter{}, func(id string, i int) bool { return i%10 != 0 }},
		{"category b, odd ids", graph.Filter{Categories: []string{"b"}, Allow: allowOdd},
			func(id string, i int) bool { return i%10 != 0 && i%3 == 1 && id[len(id)-1]%2 == 1 }},
	} {
		for trial := 0; trial < 5; trial++ {
			q := randUnit(r, dim)
			if trial == 0 {
				q = vecs["t0001"]
			}
			type pair struct {
				id string
				s  float64
			}
			var want []pair
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("t%04d", i)
				if tc.keep(id, i) {
					want = append(want, pair{id, graph.Cosine(q, vecs[id])})
				}
			}
			sort.Slice(want, func(i, j int) bool { return want[i].s > want[j].s })
			got := m.search(q, 10, newMatcher(tc.f), false)
			if len(got) != 10 {
				t.Fatalf("%s: %d hits", tc.name, len(got))
			}
			for i, h := range got {
				if h.Tool.ID != want[i].id && abs(h.Score-want[i].s) > 1e-5 {
					t.Fatalf("%s: hit %d = %s (%v), want %s (%v)", tc.name, i, h.Tool.ID, h.Score, want[i].id, want[i].s)
				}
				if abs(h.Score-want[i].s) > 1e-5 {
					t.Fatalf("%s: hit %d score %v, want %v", tc.name, i, h.Score, want[i].s)
				}
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestMeanVector: the mean covers active tools with vectors only and is
// recomputed after every change.
func TestMeanVector(t *testing.T) {
	m := newMemIndex()
	if v := m.meanVector(); v != nil {
		t.Fatalf("empty index: mean %v, want nil", v)
	}
	m.put(graph.ToolSummary{ID: "a", Status: graph.StatusActive}, []float32{1, 0})
	m.put(graph.ToolSummary{ID: "b", Status: graph.StatusActive}, []float32{0, 1})
	m.put(graph.ToolSummary{ID: "c", Status: graph.StatusActive}, nil)
	m.put(graph.ToolSummary{ID: "d", Status: graph.StatusDeprecated}, []float32{-1, 0})
	if v := m.meanVector(); len(v) != 2 || v[0] != 0.5 || v[1] != 0.5 {
		t.Fatalf("mean = %v, want [0.5 0.5]", v)
	}
	m.setStatus(graph.ToolSummary{ID: "b", Status: graph.StatusDeprecated})
	if v := m.meanVector(); v[0] != 1 || v[1] != 0 {
		t.Fatalf("after deprecating b: mean = %v, want [1 0]", v)
	}
	m.put(graph.ToolSummary{ID: "a", Status: graph.StatusActive}, []float32{0, -1})
	if v := m.meanVector(); v[0] != 0 || v[1] != -1 {
		t.Fatalf("after replacing a's vector: mean = %v, want [0 -1]", v)
	}
}

// TestMemIndexListMergesNewIDs: tools added after a listing, in any id
// order, take their places in the next listing's id order, and paging by
// cursor visits each once.
func TestMemIndexListMergesNewIDs(t *testing.T) {
	m := newMemIndex()
	r := rand.New(rand.NewPCG(9, 10))
	var all []string
	for round := 0; round < 4; round++ {
		for _, k := range r.Perm(50) {
			id := fmt.Sprintf("t.%d.%02d", k%7, round*50+k)
			m.put(graph.ToolSummary{ID: id, Status: graph.StatusActive}, nil)
			all = append(all, id)
		}
		slices.Sort(all)
		var got []string
		after := ""
		for {
			p := m.list(after, 17, newMatcher(graph.Filter{}))
			if p.Total != len(all) {
				t.Fatalf("round %d: Total = %d, want %d", round, p.Total, len(all))
			}
			for _, s := range p.Items {
				got = append(got, s.ID)
			}
			if p.Next == "" {
				break
			}
			after = p.Next
		}
		if !slices.Equal(got, all) {
			t.Fatalf("round %d: listed %v, want %v", round, got, all)
		}
	}
}

// TestMemIndexInternsSummaries: equal lists of two tools share one array
// in the index, with their values intact, and a listed copy changed by
// the caller changes neither tool.
func TestMemIndexInternsSummaries(t *testing.T) {
	m := newMemIndex()
	mk := func(id string) graph.ToolSummary {
		return graph.ToolSummary{ID: id, Status: graph.StatusActive, Category: "api",
			Permissions: []string{"public"}, RequiredParams: []string{"city", "date"}, Tags: []string{}}
	}
	m.put(mk("a"), nil)
	m.put(mk("b"), nil)
	a, _ := m.summary("a")
	b, _ := m.summary("b")
	if &a.RequiredParams[0] != &b.RequiredParams[0] || &a.Permissions[0] != &b.Permissions[0] {
		t.Errorf("equal lists are not shared: %p %p", a.RequiredParams, b.RequiredParams)
	}
	if !slices.Equal(b.RequiredParams, []string{"city", "date"}) || b.Tags == nil || len(b.Tags) != 0 {
		t.Errorf("interned summary = %+v", b)
	}
	p := m.list("", 10, newMatcher(graph.Filter{}))
	p.Items[0].RequiredParams[0] = "changed"
	if b, _ := m.summary("b"); b.RequiredParams[0] != "city" {
		t.Errorf("a listed copy's change reached the index: %v", b.RequiredParams)
	}
}
