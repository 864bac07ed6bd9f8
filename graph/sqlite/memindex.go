package sqlite

import (
	"container/heap"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek/vek32"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/vec8"
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
// 10,000 × 512 float32 the matrix is 20 MB and a float32 scan is
// memory-bound. So each row also has an int8 copy (q8, a quarter of the
// bytes) with the terms of an error bound; the scan ranks on the int8 copy
// and computes float32 scores only for rows whose bound still reaches the
// top k (see scanQuant). Results are exactly those of a float32 scan.
type memIndex struct {
	mu      sync.RWMutex
	entries []*memEntry
	// rowOf and statusOf mirror each entry's row and (interned) status in
	// dense arrays, so that the scan tests them without reading the
	// entry itself, a pointer to a summary of some hundred bytes that
	// the allocator placed anywhere (at 100,000 tools, reading it was
	// most of the scan).
	rowOf    []int32
	statusOf []string
	pos      map[string]int
	dim      int       // vector length, fixed by the first vector stored
	vecs     []float32 // len(rows) * dim
	q8       []int8    // int8 form of vecs, len(rows) * dim
	qrows    []qrow    // per row: scale and error-bound terms of q8
	// centre caches meanVector; put and setStatus clear it.
	centre atomic.Pointer[[]float32]
	// byID is every entry's index in id order, for listings; entries
	// added since it was made are merged in on the next listing. A made
	// slice is never modified (listings read it without orderMu).
	orderMu sync.Mutex
	byID    []int32
	// in shares the summaries' repeated values (under mu).
	in interner
}

// interner shares equal strings and string lists between the summaries
// the index holds: every tool decodes its own copy of its category,
// verb, permissions, groups and parameter names, and a catalogue's
// versions and regional copies repeat them (at 100,000 tools most lists
// have an equal one elsewhere). Shared values are never modified: the
// index replaces a summary whole, and hands out copies (graph.CloneSummary)
// or clipped slices. Each table stops growing at maxInterned values; later
// new values stay the tool's own.
type interner struct {
	strs  map[string]string
	lists map[string][]string
	key   []byte
}

// maxInterned bounds each table of an interner.
const maxInterned = 1 << 16

func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	if in.strs == nil {
		in.strs = map[string]string{}
	}
	if len(in.strs) < maxInterned {
		in.strs[s] = s
	}
	return s
}

func (in *interner) list(xs []string) []string {
	if len(xs) == 0 {
		return xs
	}
	in.key = in.key[:0]
	for _, x := range xs {
		in.key = append(append(in.key, x...), 0)
	}
	if c, ok := in.lists[string(in.key)]; ok {
		return c
	}
	if in.lists == nil {
		in.lists = map[string][]string{}
	}
	c := make([]string, len(xs)) // not xs's array, which the caller may still read
	for i, x := range xs {
		c[i] = in.str(x)
	}
	if len(in.lists) < maxInterned {
		in.lists[string(in.key)] = c
	}
	return c
}

// summary shares sum's repeated values with the summaries already held.
func (in *interner) summary(sum *graph.ToolSummary) {
	sum.Status = internStatus(sum.Status)
	sum.Verb, sum.Category, sum.State = in.str(sum.Verb), in.str(sum.Category), in.str(sum.State)
	sum.RequiredLevel, sum.Module, sum.Complexity, sum.Version = in.str(sum.RequiredLevel), in.str(sum.Module), in.str(sum.Complexity), in.str(sum.Version)
	sum.Tags, sum.Groups, sum.AvailableInStates = in.list(sum.Tags), in.list(sum.Groups), in.list(sum.AvailableInStates)
	sum.Permissions, sum.RequiredParams, sum.OptionalParams = in.list(sum.Permissions), in.list(sum.RequiredParams), in.list(sum.OptionalParams)
}

// qrow is the quantisation of one row: v ≈ scale·q8, with the lengths of
// the residual and of scale·q8 (see vec8.Quantize).
type qrow struct {
	scale, resid, norm float64
}

func newMemIndex() *memIndex {
	return &memIndex{pos: map[string]int{}}
}

// reserve sizes the index for n tools of dim-dimensional vectors, so that
// loading a catalogue appends into place: grown by append, the vector
// matrix of 100,000 tools was reallocated dozens of times on a start
// (1.5 GB allocated for 250 MB kept, and the old and new arrays alive
// together at each step), and kept up to a quarter more capacity than
// rows.
func (m *memIndex) reserve(n, dim int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n <= 0 {
		return
	}
	m.entries = slices.Grow(m.entries, n)
	m.rowOf = slices.Grow(m.rowOf, n)
	m.statusOf = slices.Grow(m.statusOf, n)
	if len(m.pos) == 0 {
		m.pos = make(map[string]int, n)
	}
	if dim > 0 && (m.dim == 0 || m.dim == dim) {
		m.dim = dim
		m.vecs = slices.Grow(m.vecs, n*dim)
		m.q8 = slices.Grow(m.q8, n*dim)
		m.qrows = slices.Grow(m.qrows, n)
	}
}

// put inserts or replaces a tool. vec must already be normalised (or nil);
// put copies it, so the caller may reuse it.
func (m *memIndex) put(sum graph.ToolSummary, vec []float32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.centre.Store(nil)
	m.in.summary(&sum)
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
				m.q8 = append(m.q8, make([]int8, m.dim)...)
				m.qrows = append(m.qrows, qrow{})
			} else {
				// Readers hold the read lock while scanning, so an in-place
				// overwrite under the write lock is safe.
				copy(m.vecs[e.row*m.dim:], vec)
			}
			qr := &m.qrows[e.row]
			qr.scale, qr.resid, qr.norm = vec8.Quantize(m.q8[e.row*m.dim:(e.row+1)*m.dim], vec)
		}
	} else if e.row >= 0 {
		// The tool lost its embedding: keep the row (rows are never
		// reused) but detach it.
		e.row = -1
	}
	if exists {
		m.entries[i] = e
		m.rowOf[i], m.statusOf[i] = int32(e.row), e.sum.Status
		return
	}
	m.pos[sum.ID] = len(m.entries)
	m.entries = append(m.entries, e)
	m.rowOf = append(m.rowOf, int32(e.row))
	m.statusOf = append(m.statusOf, e.sum.Status)
}

// internStatus returns the graph package's constant for a known status, so
// that the scan's status test (matcher.pushed, once per tool) compares
// equal pointers instead of bytes.
func internStatus(s string) string {
	for _, c := range [...]string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled} {
		if s == c {
			return c
		}
	}
	return s
}

// meanVector returns the mean of the (unit) vectors of active tools, or
// nil when there are none. It is computed once per change of the index.
func (m *memIndex) meanVector() []float32 {
	if p := m.centre.Load(); p != nil {
		return *p
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var mean []float32
	n := 0
	for _, e := range m.entries {
		if e.row < 0 || e.sum.Status != graph.StatusActive {
			continue
		}
		if mean == nil {
			mean = make([]float32, m.dim)
		}
		vek32.Add_Inplace(mean, m.vecs[e.row*m.dim:(e.row+1)*m.dim])
		n++
	}
	if n > 0 {
		vek32.MulNumber_Inplace(mean, 1/float32(n))
	}
	m.centre.Store(&mean)
	return mean
}

// scores returns, for each of ids that f passes and that has a vector, its
// dot product with each of qs (unit vectors), computed as search does.
func (m *memIndex) scores(qs [][]float32, ids []string, f *matcher) map[string][]float64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string][]float64, len(ids))
	for _, id := range ids {
		i, ok := m.pos[id]
		if !ok {
			continue
		}
		e := m.entries[i]
		if _, done := out[id]; done || e.row < 0 || !f.pushed(&e.sum) || !f.allow(&e.sum) {
			continue
		}
		row := m.vecs[e.row*m.dim : (e.row+1)*m.dim]
		sc := make([]float64, len(qs))
		for k, q := range qs {
			sc[k] = float64(vek32.Dot(q, row))
		}
		out[id] = sc
	}
	return out
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

// idOrder returns every entry's index in id order (bytewise, as SQLite's
// BINARY collation orders them). The entries added since the last call
// are sorted and merged into the previous order, so a listing after a
// registration does not sort the whole catalogue again.
func (m *memIndex) idOrder() []int32 {
	m.orderMu.Lock()
	defer m.orderMu.Unlock()
	m.mu.RLock()
	defer m.mu.RUnlock()
	n := len(m.entries)
	if len(m.byID) == n {
		return m.byID
	}
	id := func(i int32) string { return m.entries[i].sum.ID }
	fresh := make([]int32, 0, n-len(m.byID))
	for i := len(m.byID); i < n; i++ {
		fresh = append(fresh, int32(i))
	}
	slices.SortFunc(fresh, func(a, b int32) int { return strings.Compare(id(a), id(b)) })
	merged := make([]int32, 0, n)
	old := m.byID
	for len(old) > 0 && len(fresh) > 0 {
		if id(fresh[0]) < id(old[0]) {
			merged, fresh = append(merged, fresh[0]), fresh[1:]
		} else {
			merged, old = append(merged, old[0]), old[1:]
		}
	}
	merged = append(append(merged, old...), fresh...)
	m.byID = merged
	return merged
}

// list is graph.Store.ListTools over the memory index: the summaries f
// admits with ids after after, in id order, at most limit, with the count
// of those the pushed fields admit (Total) and the next page's cursor.
func (m *memIndex) list(after string, limit int, f *matcher) graph.ToolPage {
	order := m.idOrder()
	m.mu.RLock()
	defer m.mu.RUnlock()
	page := graph.ToolPage{Items: make([]graph.ToolSummary, 0, min(limit, len(order)))}
	if f.categories == nil && f.modules == nil && f.ids == nil {
		// Statuses only: the dense array, without reading each entry.
		for _, st := range m.statusOf {
			if f.statusOK(st) {
				page.Total++
			}
		}
	} else {
		for _, e := range m.entries {
			if f.pushed(&e.sum) {
				page.Total++
			}
		}
	}
	start := sort.Search(len(order), func(k int) bool { return m.entries[order[k]].sum.ID > after })
	var tmp graph.ToolSummary // Allow's copy
	for _, i := range order[start:] {
		sum := &m.entries[i].sum
		if !f.pushed(sum) || !f.allowOn(&tmp, sum) {
			continue
		}
		if len(page.Items) == limit {
			page.Next = page.Items[len(page.Items)-1].ID
			break
		}
		page.Items = append(page.Items, graph.CloneSummary(*sum))
	}
	return page
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
	m.centre.Store(nil)
	m.in.summary(&sum)
	if i, ok := m.pos[sum.ID]; ok {
		old := m.entries[i]
		m.entries[i] = &memEntry{sum: sum, row: old.row, centroid: old.centroid, usage: old.usage}
		m.statusOf[i] = sum.Status
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
	return m.searchWith(q, k, f, useCentroid, !useCentroid)
}

// searchWith is search, with the int8 pass (scanQuant) on or off; off is
// the plain float32 scan, kept for usage centroids and as the reference
// in tests and benchmarks.
func (m *memIndex) searchWith(q []float32, k int, f *matcher, useCentroid, quant bool) []graph.Hit {
	if k <= 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	entries, rows, stats := m.entries, m.rowOf, m.statusOf
	if f.ids != nil && len(f.ids) < len(entries)/8 {
		// A short id list: visit those entries instead of every one.
		sub := make([]*memEntry, 0, len(f.ids))
		rows, stats = make([]int32, 0, len(f.ids)), make([]string, 0, len(f.ids))
		for id := range f.ids {
			if i, ok := m.pos[id]; ok {
				sub = append(sub, m.entries[i])
				rows, stats = append(rows, m.rowOf[i]), append(stats, m.statusOf[i])
			}
		}
		entries = sub
	}
	shards := 1
	if !useCentroid && len(entries)*m.dim >= parallelMinFloats {
		shards = min(runtime.GOMAXPROCS(0), maxShards)
	}
	scan := func(lo, hi int) []scored { return m.scan(entries[lo:hi], q, k, f, useCentroid) }
	if quant && !useCentroid && len(q) == m.dim {
		qq := newQuantQuery(q)
		scan = func(lo, hi int) []scored {
			return m.scanQuant(entries[lo:hi], rows[lo:hi], stats[lo:hi], q, qq, k, f)
		}
	}
	var best []scored
	if shards <= 1 {
		best = scan(0, len(entries))
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
				parts[i] = scan(lo, hi)
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
		hits[i] = graph.Hit{Tool: graph.CloneSummary(c.e.sum), Score: float64(c.score)}
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
	var tmp graph.ToolSummary // Allow's copy, one per scan
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
		if !f.allowOn(&tmp, &e.sum) {
			continue
		}
		heap.Push(&h, c)
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	return h
}

// quantQuery is a query vector's int8 form (see vec8.Quantize).
type quantQuery struct {
	q8                 []int8
	scale, resid, norm float64
}

func newQuantQuery(q []float32) *quantQuery {
	qq := &quantQuery{q8: make([]int8, len(q))}
	qq.scale, qq.resid, qq.norm = vec8.Quantize(qq.q8, q)
	return qq
}

// quantSlack absorbs float32 rounding in vek32.Dot (at most a few 1e-5 for
// unit vectors of a few thousand dimensions) so that the bound holds
// against the scores the scan reports, not only against exact arithmetic.
const quantSlack = 1e-4

// quantCand is a row that may belong to the top k: ub bounds its score.
type quantCand struct {
	e       *memEntry
	ub      float64
	allowed bool // Allow already returned true
}

// scanQuant returns the same best k of entries as scan (same scores, same
// ties), reading the float32 matrix only where the int8 one cannot decide.
//
// Pass 1 computes each row's int8 score with an error bound, which gives an
// interval [lb, ub] holding its float32 score. τ, the k-th best lower bound
// among allowed rows, is a floor for the k-th best score, so rows with
// ub < τ cannot enter the top k. Pass 2 scores the remaining candidates
// exactly, best upper bound first, and stops once the next upper bound is
// below the k-th exact score. The caller holds m.mu.
//
// rows and stats are the entries' rows and statuses (memIndex.rowOf,
// statusOf): an entry is read only when the filter needs more than its
// status, or when its row may enter the top k.
func (m *memIndex) scanQuant(entries []*memEntry, rows []int32, stats []string, q []float32, qq *quantQuery, k int, f *matcher) []scored {
	dim := m.dim
	lbs := make(floatMinHeap, 0, k+1) // best k lower bounds, worst on top
	cands := make([]quantCand, 0, 4*k+16)
	more := f.categories != nil || f.ids != nil || f.modules != nil
	var tmp graph.ToolSummary // Allow's copy, one per scan
	for i, r32 := range rows {
		if r32 < 0 || !f.statusOK(stats[i]) {
			continue
		}
		e := entries[i]
		if more && !f.pushed(&e.sum) {
			continue
		}
		r := int(r32)
		qr := &m.qrows[r]
		approx := qq.scale * qr.scale * float64(vec8.Dot(qq.q8, m.q8[r*dim:(r+1)*dim]))
		b := vec8.Bound(qq.resid, qq.norm, qr.resid, qr.norm) + quantSlack
		ub := approx + b
		if len(lbs) == k && ub < lbs[0] {
			continue
		}
		c := quantCand{e: e, ub: ub}
		if lb := approx - b; len(lbs) < k || lb > lbs[0] {
			// Only allowed rows may raise the floor.
			if !f.allowOn(&tmp, &e.sum) {
				continue
			}
			c.allowed = true
			heap.Push(&lbs, lb)
			if len(lbs) > k {
				heap.Pop(&lbs)
			}
		}
		cands = append(cands, c)
	}
	if len(lbs) == k {
		floor := lbs[0]
		cands = slices.DeleteFunc(cands, func(c quantCand) bool { return c.ub < floor })
	}
	slices.SortFunc(cands, func(a, b quantCand) int {
		switch {
		case a.ub > b.ub:
			return -1
		case a.ub < b.ub:
			return 1
		}
		return 0
	})
	h := make(minHeap, 0, k+1)
	for _, c := range cands {
		if len(h) == k && c.ub < float64(h[0].score) {
			break
		}
		r := c.e.row
		sc := scored{e: c.e, score: vek32.Dot(q, m.vecs[r*dim:(r+1)*dim])}
		if len(h) == k && !better(sc, h[0]) {
			continue
		}
		if !c.allowed && !f.allowOn(&tmp, &c.e.sum) {
			continue
		}
		heap.Push(&h, sc)
		if len(h) > k {
			heap.Pop(&h)
		}
	}
	return h
}

// floatMinHeap is a min-heap of float64.
type floatMinHeap []float64

func (h floatMinHeap) Len() int           { return len(h) }
func (h floatMinHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatMinHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatMinHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatMinHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
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
	st := slices.Clone(statuses(f))
	for i := range st {
		st[i] = internStatus(st[i])
	}
	m := &matcher{statuses: set(st), categories: set(f.Categories), ids: set(f.IDs), modules: set(f.Modules), allowFn: f.Allow}
	if len(st) == 1 {
		m.status = st[0]
	}
	return m
}

// statusOK reports whether the filter admits a status.
func (m *matcher) statusOK(s string) bool {
	if m.status != "" {
		return s == m.status
	}
	return m.statuses[s]
}

// pushed applies the fields a query language would handle.
func (m *matcher) pushed(s *graph.ToolSummary) bool {
	if !m.statusOK(s.Status) {
		return false
	}
	return (m.categories == nil || m.categories[s.Category]) &&
		(m.ids == nil || m.ids[s.ID]) &&
		(m.modules == nil || m.modules[graph.ModuleOf(s)])
}

// allow runs the caller's visibility check on a copy, so that a careless
// callback cannot modify the index.
func (m *matcher) allow(s *graph.ToolSummary) bool {
	if m.allowFn == nil {
		return true
	}
	c := graph.CloneSummary(*s)
	return m.allowFn(&c)
}

// allowOn is allow with tmp as the copy: a shallow one, whose slices are
// clipped so that an append cannot write into the index's arrays, and no
// allocation per call (the scan calls it for every row that may enter the
// top k). graph.Filter.Allow must not modify the summary's slices.
func (m *matcher) allowOn(tmp, s *graph.ToolSummary) bool {
	if m.allowFn == nil {
		return true
	}
	*tmp = *s
	clip := func(xs []string) []string { return xs[:len(xs):len(xs)] }
	tmp.Tags, tmp.Groups, tmp.AvailableInStates = clip(s.Tags), clip(s.Groups), clip(s.AvailableInStates)
	tmp.Permissions, tmp.RequiredParams, tmp.OptionalParams = clip(s.Permissions), clip(s.RequiredParams), clip(s.OptionalParams)
	return m.allowFn(tmp)
}

// statuses returns the filter's statuses, defaulting to active.
func statuses(f graph.Filter) []string {
	if len(f.Statuses) == 0 {
		return []string{graph.StatusActive}
	}
	return f.Statuses
}
