package use

import (
	"math/bits"
	"sync"
	"unsafe"
)

// A pass of the graph computes a few hundred intermediate float tensors,
// most of them dropped a step or two later (graph.release). Allocating each
// one afresh made embedding a registration's texts allocate about 5 MB per
// text; with a large catalogue live in the same process the collector then
// ran every few hundred tools and marked the whole catalogue each time. An
// arena recycles the float buffers of dropped tensors for the later steps
// of the same pass and, through arenaPool, for later passes.

// arena is a free list of float32 buffers by power-of-two capacity. It is
// used by one pass at a time. A nil *arena allocates every buffer afresh.
type arena struct {
	free [bits.UintSize][][]float32
	// held is the float32 capacity the free lists hold.
	held int
	// tables are two reusable broadcast index tables (newIndexer).
	tables [2][]int
}

// arenaMaxHeld bounds what an idle arena keeps (in float32s, 64 MiB): a
// pass over an unusually long batch does not pin its peak for good.
const arenaMaxHeld = 16 << 20

var arenaPool = sync.Pool{New: func() any { return new(arena) }}

// floats returns a zeroed buffer of n float32s.
func (x *arena) floats(n int) []float32 {
	if x == nil || n == 0 {
		return make([]float32, n)
	}
	c := bits.Len(uint(n - 1)) // 1<<c >= n
	// The class itself, else the next one up (at most four times the
	// floats asked for): a pass's shapes vary, and a free buffer of the
	// next class serves better than a new one.
	for d := c; d <= c+1 && d < len(x.free); d++ {
		if l := x.free[d]; len(l) > 0 {
			buf := l[len(l)-1]
			x.free[d] = l[:len(l)-1]
			x.held -= cap(buf)
			buf = buf[:n]
			clear(buf)
			return buf
		}
	}
	return make([]float32, n, 1<<c)
}

// put gives buf back for reuse. The caller guarantees that nothing reads
// or writes it any more.
func (x *arena) put(buf []float32) {
	c := cap(buf)
	if x == nil || c == 0 || c&(c-1) != 0 || x.held+c > arenaMaxHeld {
		return // not one of floats' buffers, or the arena is full
	}
	k := bits.TrailingZeros(uint(c))
	x.free[k] = append(x.free[k], buf[:0])
	x.held += c
}

// table returns x's index table number slot with n entries (fresh when x
// is nil); its contents are undefined.
func (x *arena) table(slot, n int) []int {
	if x == nil {
		return make([]int, n)
	}
	if cap(x.tables[slot]) < n {
		x.tables[slot] = make([]int, n)
	}
	return x.tables[slot][:n]
}

func (x *arena) newFloat(shape []int) *tensor {
	return &tensor{dt: dtFloat, shape: shape, f: x.floats(numElems(shape))}
}

func (x *arena) newOfType(dt dtype, shape []int) *tensor {
	if dt == dtFloat {
		return x.newFloat(shape)
	}
	return newOfType(dt, shape)
}

// bufRefs counts, during one pass, the live tensors that read each float
// buffer: a Reshape, ExpandDims or Squeeze output shares its input's
// buffer, so a buffer returns to the arena only when the last tensor
// reading it is dropped. Constants and fed inputs are pinned: never
// recycled.
type bufRefs map[*float32]int

const pinned = 1 << 40

func (r bufRefs) add(t *tensor, n int) {
	if t == nil || t.dt != dtFloat || cap(t.f) == 0 {
		return
	}
	r[unsafe.SliceData(t.f)] += n
}

// drop forgets one reader of t's buffer and recycles the buffer into x
// when it was the last.
func (r bufRefs) drop(t *tensor, x *arena) {
	if t == nil || t.dt != dtFloat || cap(t.f) == 0 {
		return
	}
	p := unsafe.SliceData(t.f)
	n, ok := r[p]
	if !ok {
		return
	}
	if n > 1 {
		r[p] = n - 1
		return
	}
	delete(r, p)
	x.put(t.f)
}
