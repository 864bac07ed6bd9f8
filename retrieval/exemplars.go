package retrieval

import (
	"slices"
	"sort"
	"sync"

	"github.com/viterin/vek/vek32"
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
		e.slots[tool] = append(e.slots[tool], i)
	case len(e.vecs) < e.cap:
		e.vecs = append(e.vecs, vec)
		e.tools = append(e.tools, tool)
		e.words = append(e.words, words)
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
		e.slots[tool] = append(e.slots[tool], i)
	}
	e.log.count(tool, words, 1)
}

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
	type nb struct {
		i   int
		sim float32
	}
	top := make([]nb, 0, k+1)
	for i, v := range e.vecs {
		if len(v) != len(q) {
			continue
		}
		s := vek32.Dot(q, v)
		if len(top) == k && s <= top[k-1].sim {
			continue
		}
		j := sort.Search(len(top), func(j int) bool { return top[j].sim < s })
		top = append(top, nb{})
		copy(top[j+1:], top[j:])
		top[j] = nb{i, s}
		if len(top) > k {
			top = top[:k]
		}
	}
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

// vote is one tool's share of a kNN vote (exemplars.vote).
type vote struct {
	sum, excess, below, best float64
}
