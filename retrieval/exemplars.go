package retrieval

import (
	"container/heap"
	"slices"
	"sort"
	"sync"

	"github.com/viterin/vek/vek32"

	"github.com/toolsmith/toolsmith/internal/vec8"
)

// exemplars is an in-process memory of the unit embeddings of recent
// successful queries, each labelled with the tool that served it: a
// nearest-neighbour view of usage evidence that complements the store's
// per-tool centroid. A centroid blurs a tool's distinct uses into one
// direction; neighbours keep them apart, so a new query phrased like any
// one past query finds its tool. The same served queries' words feed the
// query log (queryLog). It is a bounded FIFO ring (oldest evicted) filled
// by RecordEvents; after a restart it is rebuilt from the store's served
// queries and their embeddings (Service.loadMemory).
//
// No tool holds more than perTool entries: past that, its own oldest entry
// makes room. So a flood of uses of one tool (a burst of traffic, or a
// caller reporting uses to pull a tool into other searches) cannot evict
// what every other tool has learned.
type exemplars struct {
	mu      sync.RWMutex
	cap     int
	perTool int
	next    int
	vecs    [][]float32 // nil for a query served without an embedding
	q8      [][]int8    // each vector's int8 form (vec8.Quantize), for vote's first pass
	q8s     []quantStat
	tools   []string
	words   [][]string       // each query's words (logWords)
	log     queryLog         // bm25 over the words, per tool
	slots   map[string][]int // each tool's entries, oldest first
}

// exemplarShare is the share of the memory one tool may hold (at least
// minPerTool entries).
const (
	exemplarShare = 0.05
	minPerTool    = 100
)

func newExemplars(capacity int) *exemplars {
	return &exemplars{cap: capacity, perTool: max(minPerTool, int(exemplarShare*float64(capacity))),
		slots: map[string][]int{},
		log:   queryLog{postings: map[string]map[string]int{}, length: map[string]int{}}}
}

// add records that tool served query, with the query's unit embedding
// when there is one; a query with neither is not an entry.
func (e *exemplars) add(tool string, vec []float32, query string) {
	words := logWords(query)
	if vec == nil && len(words) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case len(e.slots[tool]) >= e.perTool:
		// The tool's own oldest entry makes room.
		i := e.slots[tool][0]
		e.slots[tool] = e.slots[tool][1:]
		e.log.count(tool, e.words[i], -1)
		e.vecs[i], e.words[i] = vec, words
		e.quantize(i)
		e.slots[tool] = append(e.slots[tool], i)
	case len(e.vecs) < e.cap:
		e.vecs = append(e.vecs, vec)
		e.q8 = append(e.q8, nil)
		e.q8s = append(e.q8s, quantStat{})
		e.tools = append(e.tools, tool)
		e.words = append(e.words, words)
		e.quantize(len(e.vecs) - 1)
		e.slots[tool] = append(e.slots[tool], len(e.vecs)-1)
	default:
		i := e.next
		e.next = (e.next + 1) % e.cap
		old := e.tools[i]
		e.log.count(old, e.words[i], -1)
		if j := slices.Index(e.slots[old], i); j >= 0 {
			e.slots[old] = slices.Delete(e.slots[old], j, j+1)
		}
		if len(e.slots[old]) == 0 {
			delete(e.slots, old)
		}
		e.vecs[i], e.tools[i], e.words[i] = vec, tool, words
		e.quantize(i)
		e.slots[tool] = append(e.slots[tool], i)
	}
	e.log.count(tool, words, 1)
}

// quantStat is one vector's int8 scale and error-bound terms (vec8.Quantize).
type quantStat struct{ scale, resid, norm float64 }

// quantize refreshes entry i's int8 form, reusing its buffer. The caller
// holds e.mu for writing.
func (e *exemplars) quantize(i int) {
	v := e.vecs[i]
	if v == nil {
		e.q8[i], e.q8s[i] = nil, quantStat{}
		return
	}
	if len(e.q8[i]) != len(v) {
		e.q8[i] = make([]int8, len(v))
	}
	st := &e.q8s[i]
	st.scale, st.resid, st.norm = vec8.Quantize(e.q8[i], v)
}

// quantSlack absorbs float32 rounding in vek32.Dot, so that the int8
// bound holds against the similarities vote compares (as the SQLite
// store's vector index does).
const quantSlack = 1e-4

// logScores is the query-log signal: bm25 of the query's words against
// each tool's served-query document.
func (e *exemplars) logScores(query string) map[string]float64 {
	words := logWords(query)
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.log.score(words)
}

// vote returns, per tool, the similarity-weighted kNN vote of the query's
// k nearest exemplars: the summed similarity of those at least floor
// similar to the query and their summed excess over the floor, the summed
// similarity of those below it, and the best similarity.
func (e *exemplars) vote(q []float32, k int, floor float64) map[string]vote {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if len(e.vecs) == 0 {
		return nil
	}
	if k <= 0 {
		return nil
	}
	// The first pass ranks every entry on its int8 form, with an interval
	// holding its float32 similarity; the k-th best lower bound is a floor
	// under the k-th best similarity, so an entry whose upper bound is
	// below it cannot be a neighbour. The second pass computes the float32
	// similarities of the others, in memory order, with the selection the
	// exact scan made: the same neighbours, ties and sums, from a quarter
	// of the bytes.
	qq := make([]int8, len(q))
	qs, qr, qn := vec8.Quantize(qq, q)
	lbs := make(lowHeap, 0, k+1)
	type cand struct {
		i  int
		ub float64
	}
	cands := make([]cand, 0, 4*k+16)
	for i, v := range e.vecs {
		if len(v) != len(q) {
			continue
		}
		st := &e.q8s[i]
		approx := qs * st.scale * float64(vec8.Dot(qq, e.q8[i]))
		b := vec8.Bound(qr, qn, st.resid, st.norm) + quantSlack
		if len(lbs) == k && approx+b < lbs[0] {
			continue
		}
		if lb := approx - b; len(lbs) < k || lb > lbs[0] {
			heap.Push(&lbs, lb)
			if len(lbs) > k {
				heap.Pop(&lbs)
			}
		}
		cands = append(cands, cand{i, approx + b})
	}
	top := make([]neighbour, 0, k+1)
	for _, c := range cands {
		if len(lbs) == k && c.ub < lbs[0] {
			continue
		}
		top = keepNearest(top, neighbour{c.i, vek32.Dot(q, e.vecs[c.i])}, k)
	}
	return e.tally(top, floor)
}

// neighbour is an exemplar by index with its similarity to the query.
type neighbour struct {
	i   int
	sim float32
}

// keepNearest adds n to top, the k most similar so far in descending
// order (ties: the earlier first), and returns it.
func keepNearest(top []neighbour, n neighbour, k int) []neighbour {
	if len(top) == k && n.sim <= top[k-1].sim {
		return top
	}
	j := sort.Search(len(top), func(j int) bool { return top[j].sim < n.sim })
	top = append(top, neighbour{})
	copy(top[j+1:], top[j:])
	top[j] = n
	if len(top) > k {
		top = top[:k]
	}
	return top
}

// tally is vote's per-tool sum over the nearest exemplars top.
func (e *exemplars) tally(top []neighbour, floor float64) map[string]vote {
	out := map[string]vote{}
	for _, n := range top {
		if s := float64(n.sim); s > 0 {
			v := out[e.tools[n.i]]
			if s >= floor {
				v.sum += s
				v.excess += (s - floor) / (1 - floor)
			} else {
				v.below += s
			}
			v.best = max(v.best, s)
			out[e.tools[n.i]] = v
		}
	}
	return out
}

// lowHeap is a min-heap of float64: the best k lower bounds, worst on top.
type lowHeap []float64

func (h lowHeap) Len() int           { return len(h) }
func (h lowHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h lowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lowHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *lowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// vote is one tool's share of a kNN vote (exemplars.vote).
type vote struct {
	sum, excess, below, best float64
}
