package sqlite

import (
	"container/heap"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/viterin/vek/vek32"

	"github.com/toolsmith/toolsmith/graph"
)

// memEntry is one tool in the in-memory index.
type memEntry struct {
	sum      graph.ToolSummary
	row      int          // row of the tool's vector in memIndex.vecs; -1 when none
	centroid []float32    // unit-length usage centroid; nil when none
	usage    *graph.Usage // counters (Centroid unset); nil when never used
}

// memIndex holds every tool's summary and normalised embedding, and every
// usage centroid, for exact k-NN. Tools are never deleted (only their status
// changes), so entries live in an append-only slice addressed by id, and
// their vectors in one contiguous row-major matrix (vecs) that the scan
// walks sequentially, which matters more than the dot product itself: at
// 10,000 × 512 float32 the matrix is 20 MB and the scan is memory-bound.
type memIndex struct {
	mu      sync.RWMutex
	entries []*memEntry
	pos     map[string]int
	dim     int       // vector length, fixed by the first vector stored
	vecs    []float32 // len(rows) * dim
}

func newMemIndex() *memIndex {
	return &memIndex{pos: map[string]int{}}
}

// put inserts or replaces a tool. vec must already be normalised (or nil).
func (m *memIndex) put(sum graph.ToolSummary, vec []float32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &memEntry{sum: sum, row: -1}
	i, exists := m.pos[sum.ID]
	if exists {
		old := m.entries[i]
		e.row, e.centroid, e.usage = old.row, old.centroid, old.usage
	}
	if vec != nil {
		if m.dim == 0 {
			m.dim = len(vec)
		}
		if len(vec) == m.dim {
			if e.row < 0 {
				e.row = len(m.vecs) / m.dim
				m.vecs = append(m.vecs, vec...)
			} else {
				// Readers hold the read lock while scanning, so an in-place
				// overwrite under the write lock is safe.
				copy(m.vecs[e.row*m.dim:], vec)
			}
		}
	} else if e.row >= 0 {
		// The tool lost its embedding: keep the row (rows are never
		// reused) but detach it.
		e.row = -1
	}
	if exists {
		m.entries[i] = e
		return
	}
	m.pos[sum.ID] = len(m.entries)
	m.entries = append(m.entries, e)
}

// summary returns a tool's summary (shared: callers must not modify it).
func (m *memIndex) summary(id string) (graph.ToolSummary, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i, ok := m.pos[id]
	if !ok {
		return graph.ToolSummary{}, false
	}
	return m.entries[i].sum, true
}

// len returns the number of tools.
func (m *memIndex) len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.entries)
}

// setStatus updates a tool's status and timestamp in place.
func (m *memIndex) setStatus(sum graph.ToolSummary) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i, ok := m.pos[sum.ID]; ok {
		old := m.entries[i]
		m.entries[i] = &memEntry{sum: sum, row: old.row, centroid: old.centroid, usage: old.usage}
	}
}

// setUsage records a tool's usage counters and its unit-length usage
// centroid (nil when none).
func (m *memIndex) setUsage(u graph.Usage, centroid []float32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i, ok := m.pos[u.ToolID]; ok {
		// Readers hold the read lock while scanning: replacing the fields
		// under the write lock is safe.
		u.Centroid = nil
		m.entries[i].centroid, m.entries[i].usage = centroid, &u
	}
}

// usageOf returns a tool's usage evidence with a copy of its centroid;
// ok is false when the tool was never used.
func (m *memIndex) usageOf(id string) (graph.Usage, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i, ok := m.pos[id]
	if !ok || m.entries[i].usage == nil {
		return graph.Usage{}, false
	}
	u := *m.entries[i].usage
	u.Centroid = slices.Clone(m.entries[i].centroid)
	return u, true
}

// scored is a candidate of a top-k selection.
type scored struct {
	e     *memEntry
	score float32
}

// minHeap keeps the best k candidates with the worst on top.
type minHeap []scored

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].e.sum.ID > h[j].e.sum.ID // larger id is "worse" on ties
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// better reports whether a ranks before b (higher score, then smaller id).
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.e.sum.ID < b.e.sum.ID
}

// search returns the k entries whose vectors (from vecOf) have the highest
// dot product with q (already unit length), among those passing the pushed
// filter and Allow. Allow is only consulted for candidates that would enter
// the current top k, which keeps it off the hot path.
func (m *memIndex) search(q []float32, k int, f *matcher, useCentroid bool) []graph.Hit {
	if k <= 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	entries := m.entries
	shards := 1
	if !useCentroid && len(entries)*m.dim >= parallelMinFloats {
		shards = min(runtime.GOMAXPROCS(0), maxShards)
	}
	var best []scored
	if shards <= 1 {
		best = m.scan(entries, q, k, f, useCentroid)
	} else {
		// The scan is memory-bound (the matrix is far larger than the
		// caches), so splitting it over cores raises the bandwidth used.
		parts := make([][]scored, shards)
		chunk := (len(entries) + shards - 1) / shards
		var wg sync.WaitGroup
		for i := 0; i < shards; i++ {
			lo, hi := i*chunk, min((i+1)*chunk, len(entries))
			if lo >= hi {
				continue
			}
			wg.Add(1)
			go func(i, lo, hi int) {
				defer wg.Done()
				parts[i] = m.scan(entries[lo:hi], q, k, f, useCentroid)
			}(i, lo, hi)
		}
		wg.Wait()
		for _, p := range parts {
			best = append(best, p...)
		}
	}
	sort.Slice(best, func(i, j int) bool { return better(best[i], best[j]) })
	if len(best) > k {
		best = best[:k]
	}
	hits := make([]graph.Hit, len(best))
	for i, c := range best {
		hits[i] = graph.Hit{Tool: cloneSummary(c.e.sum), Score: float64(c.score)}
	}
	return hits
}

// parallelMinFloats is the matrix size (in floats) from which search splits
// its scan over goroutines; below it the goroutine start-up costs more than
// it saves. maxShards bounds the split.
const (
	parallelMinFloats = 1 << 20
	maxShards         = 8
)

// scan returns the best k of entries (unordered). The caller holds m.mu.
func (m *memIndex) scan(entries []*memEntry, q []float32, k int, f *matcher, useCentroid bool) []scored {
	h := make(minHeap, 0, k+1)
	for _, e := range entries {
		var v []float32
		if useCentroid {
			v = e.centroid
		} else if e.row >= 0 {
			v = m.vecs[e.row*m.dim : (e.row+1)*m.dim]
		}
		if v == nil || len(v) != len(q) || !f.pushed(&e.sum) {
			continue
		}
		c := scored{e: e, score: vek32.Dot(q, v)}
		if len(h) == k && !better(c, h[0]) {
			continue
		}
		if !f.allow(&e.sum) {
			continue
		}
		heap.Push(&h, c)
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	return h
}

// matcher applies a graph.Filter in Go.
type matcher struct {
	status                             string // the only status, when there is one
	statuses, categories, ids, modules map[string]bool
	allowFn                            func(*graph.ToolSummary) bool
}

func newMatcher(f graph.Filter) *matcher {
	set := func(xs []string) map[string]bool {
		if len(xs) == 0 {
			return nil
		}
		m := make(map[string]bool, len(xs))
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	st := statuses(f)
	m := &matcher{statuses: set(st), categories: set(f.Categories), ids: set(f.IDs), modules: set(f.Modules), allowFn: f.Allow}
	if len(st) == 1 {
		m.status = st[0]
	}
	return m
}

// pushed applies the fields a query language would handle.
func (m *matcher) pushed(s *graph.ToolSummary) bool {
	if m.status != "" {
		if s.Status != m.status {
			return false
		}
	} else if !m.statuses[s.Status] {
		return false
	}
	return (m.categories == nil || m.categories[s.Category]) &&
		(m.ids == nil || m.ids[s.ID]) &&
		(m.modules == nil || m.modules[s.Module])
}

// allow runs the caller's visibility check on a copy, so that a careless
// callback cannot modify the index.
func (m *matcher) allow(s *graph.ToolSummary) bool {
	if m.allowFn == nil {
		return true
	}
	c := cloneSummary(*s)
	return m.allowFn(&c)
}

// statuses returns the filter's statuses, defaulting to active.
func statuses(f graph.Filter) []string {
	if len(f.Statuses) == 0 {
		return []string{graph.StatusActive}
	}
	return f.Statuses
}

// cloneSummary deep-copies the slices of a summary.
func cloneSummary(s graph.ToolSummary) graph.ToolSummary {
	c := func(xs []string) []string {
		if xs == nil {
			return nil
		}
		return append([]string(nil), xs...)
	}
	s.Tags, s.Groups, s.AvailableInStates = c(s.Tags), c(s.Groups), c(s.AvailableInStates)
	s.Permissions, s.RequiredParams, s.OptionalParams = c(s.Permissions), c(s.RequiredParams), c(s.OptionalParams)
	return s
}
