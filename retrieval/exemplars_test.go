package retrieval

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/viterin/vek/vek32"

	"github.com/toolsmith/toolsmith/graph"
)

// TestExemplarsFloodOfOneTool: a flood of one tool's uses replaces that
// tool's own oldest entries past its share, and never evicts what the
// other tools learned.
func TestExemplarsFloodOfOneTool(t *testing.T) {
	e := newExemplars(1000) // 100 entries per tool at most (minPerTool)
	for i := range 300 {
		e.add(fmt.Sprintf("tool.%d", i%3), []float32{1, 0}, fmt.Sprintf("honest query %d", i))
	}
	for i := range 5000 {
		e.add("flood.tool", []float32{0, 1}, fmt.Sprintf("flood %d", i))
	}
	count := map[string]int{}
	for _, id := range e.tools {
		count[id]++
	}
	if count["flood.tool"] != e.perTool {
		t.Errorf("the flooded tool holds %d entries; want its share %d", count["flood.tool"], e.perTool)
	}
	for i := range 3 {
		if id := fmt.Sprintf("tool.%d", i); count[id] != 100 {
			t.Errorf("%s holds %d entries after the flood; want its 100", id, count[id])
		}
	}
	// The flooded tool keeps its newest entries, and its slots match the memory.
	if got := len(e.slots["flood.tool"]); got != e.perTool {
		t.Fatalf("slots: %d", got)
	}
	last := e.words[e.slots["flood.tool"][e.perTool-1]]
	if len(last) == 0 || last[len(last)-1] != "4999" {
		t.Errorf("the flooded tool's newest entry is %v; want flood 4999's words", last)
	}
	// The query log counts what the memory holds: the flood's evicted
	// words are gone.
	if s := e.logScores("flood 10"); s["flood.tool"] <= 0 {
		t.Errorf("query log lost the flooded tool: %v", s)
	}
	for id, n := range count {
		if n != len(e.slots[id]) {
			t.Errorf("%s: %d entries but %d slots", id, n, len(e.slots[id]))
		}
	}
}

// TestExemplarsRingStillEvictsTheOldest: with every tool under its share,
// a full memory evicts the oldest entry, and the slots follow.
func TestExemplarsRingStillEvictsTheOldest(t *testing.T) {
	e := newExemplars(200) // 100 per tool
	for i := range 400 {
		e.add(fmt.Sprintf("t%d", i%4), []float32{1, 0}, fmt.Sprintf("q %d", i))
	}
	if len(e.vecs) != 200 {
		t.Fatalf("memory holds %d; want 200", len(e.vecs))
	}
	total := 0
	for id, sl := range e.slots {
		total += len(sl)
		for _, i := range sl {
			if e.tools[i] != id {
				t.Fatalf("slot %d of %s holds %s", i, id, e.tools[i])
			}
		}
	}
	if total != 200 {
		t.Fatalf("slots count %d entries; want 200", total)
	}
}

// voteExact is the kNN vote as a plain float32 scan: the reference the
// quantised vote must match exactly.
func voteExact(e *exemplars, q []float32, k int, floor float64) map[string]vote {
	top := make([]neighbour, 0, k+1)
	for i, v := range e.vecs {
		if len(v) == len(q) {
			top = keepNearest(top, neighbour{i, vek32.Dot(q, v)}, k)
		}
	}
	return e.tally(top, floor)
}

func unitVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return graph.Normalize(v)
}

// The vote's int8 first pass changes nothing: over a memory with exact
// duplicates (ties), near-duplicates, spiky vectors, entries without a
// vector and entries replaced by eviction, it returns the float32 scan's
// votes for every query and k.
func TestExemplarsVoteMatchesExactScan(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const dim = 96
	e := newExemplars(600)
	base := make([][]float32, 40)
	for i := range base {
		base[i] = unitVec(r, dim)
	}
	for i := range 2000 { // past the capacity: eviction rewrites entries
		var v []float32
		switch i % 6 {
		case 0:
			v = slices.Clone(base[r.IntN(len(base))]) // exact duplicate: ties
		case 1:
			v = slices.Clone(base[r.IntN(len(base))])
			v[r.IntN(dim)] += 0.01
			v = graph.Normalize(v) // near-duplicate
		case 2:
			v = unitVec(r, dim)
			v[r.IntN(dim)] = 30
			v = graph.Normalize(v) // one large component
		case 3:
			v = nil // a query served without an embedding
		default:
			v = unitVec(r, dim)
		}
		e.add(fmt.Sprintf("tool.%d", r.IntN(60)), v, fmt.Sprintf("query %d", i))
	}
	for trial := range 300 {
		q := base[trial%len(base)]
		if trial%3 == 1 {
			q = unitVec(r, dim)
		}
		for _, k := range []int{1, 3, 10, 50} {
			got, want := e.vote(q, k, 0.3), voteExact(e, q, k, 0.3)
			if !maps.Equal(got, want) {
				t.Fatalf("trial %d k=%d: vote\n%v\nwant\n%v", trial, k, got, want)
			}
		}
	}
}

// BenchmarkExemplarsVote is the neighbours signal's scan over a full
// memory of 20,000 past queries (Options.Exemplars' default) at 512
// dimensions: the int8 first pass against the float32 scan it replaced.
func BenchmarkExemplarsVote(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	e := newExemplars(20000)
	for range 20000 {
		e.add(fmt.Sprintf("tool.%d", r.IntN(5000)), unitVec(r, 512), "q")
	}
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = unitVec(r, 512)
	}
	b.Run("int8-first-pass", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.vote(qs[i%len(qs)], 3, 0.3)
		}
	})
	b.Run("float32-scan", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			voteExact(e, qs[i%len(qs)], 3, 0.3)
		}
	})
}
