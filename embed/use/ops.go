package use

import (
	"fmt"
	"math"

	"github.com/viterin/vek/vek32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The kernels below follow TF.js' CPU backend semantics: element values are
// float32, and reductions and activation-by-activation products accumulate in
// float64 (as JavaScript numbers do) before one rounding to float32. The one
// deliberate exception is the product with a weight matrix, which
// accumulates in float32 with fused multiply-adds for speed (the packed
// assembly kernel of sgemm.go, or vek's AVX2 kernel; both add the products
// in the same order and give the same bits); the final vectors still
// agree with TF.js to about 2e-7 per dimension (see TestReferenceEmbeddings).

// broadcastShape returns the NumPy-style broadcast of a and b.
func broadcastShape(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for k := 0; k < n; k++ {
		da, db := 1, 1
		if j := len(a) - n + k; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + k; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[k] = da
		case da == 1:
			out[k] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// indexer maps flat indices of a broadcast result to flat indices of one
// operand: identity, scalar and trailing-suffix operands (biases, scales) take
// a fast path; anything else uses a precomputed table.
type indexer struct {
	mode  uint8 // 0 identity, 1 scalar, 2 modulo, 3 table, 4 division
	mod   int
	table []int
}

func (x *indexer) at(k int) int {
	switch x.mode {
	case 0:
		return k
	case 1:
		return 0
	case 2:
		return k % x.mod
	case 4:
		return k / x.mod
	}
	return x.table[k]
}

// newIndexer maps flat indices of out to flat indices of in, broadcast to
// out. A lookup table, when one is needed, is x's table number slot (fresh
// when x is nil), valid until the next newIndexer with that slot.
func newIndexer(x *arena, slot int, out, in []int) indexer {
	n, m := numElems(out), numElems(in)
	switch {
	case m == n:
		return indexer{mode: 0}
	case m == 1:
		return indexer{mode: 1}
	}
	// Strip in's leading ones; if the rest equals out's tail, it repeats.
	j := 0
	for j < len(in) && in[j] == 1 {
		j++
	}
	rest := in[j:]
	if len(rest) <= len(out) {
		tail := out[len(out)-len(rest):]
		same := true
		for k := range rest {
			if rest[k] != tail[k] {
				same = false
				break
			}
		}
		if same {
			return indexer{mode: 2, mod: m}
		}
	}
	// A prefix of out's shape followed by ones (a per-row statistic such as
	// a layer norm's mean): each element repeats over the trailing block.
	if off := len(out) - len(in); off >= 0 {
		split := len(in)
		for split > 0 && in[split-1] == 1 {
			split--
		}
		prefix := true
		for k := 0; k < split; k++ {
			if in[k] != out[off+k] {
				prefix = false
				break
			}
		}
		lead := 1
		for k := 0; k < off; k++ {
			lead *= out[k]
		}
		if prefix && lead == 1 && m > 0 {
			return indexer{mode: 4, mod: n / m}
		}
	}
	return indexer{mode: 3, table: broadcastIndex(x.table(slot, n), out, in)}
}

// broadcastIndex maps every flat index of out to a flat index of in, in
// idx (numElems(out) long), and returns idx.
func broadcastIndex(idx []int, out, in []int) []int {
	n := numElems(out)
	// Strides of in aligned to out, zero where in is broadcast.
	st := make([]int, len(out))
	ist := strides(in)
	off := len(out) - len(in)
	for k := range in {
		if in[k] != 1 {
			st[off+k] = ist[k]
		}
	}
	ctr := make([]int, len(out))
	pos := 0
	for k := 0; k < n; k++ {
		idx[k] = pos
		for d := len(out) - 1; d >= 0; d-- {
			ctr[d]++
			pos += st[d]
			if ctr[d] < out[d] {
				break
			}
			pos -= st[d] * ctr[d]
			ctr[d] = 0
		}
	}
	return idx
}

type binKind uint8

const (
	binAdd binKind = iota
	binSub
	binMul
	binDiv
	binMax
	binLess
	binGreater
)

func binaryOp(x *arena, kind binKind, a, b *tensor) (*tensor, error) {
	if (a.dt == dtFloat) != (b.dt == dtFloat) {
		return nil, fmt.Errorf("mixed dtypes %s and %s", a.dt, b.dt)
	}
	shape, err := broadcastShape(a.shape, b.shape)
	if err != nil {
		return nil, err
	}
	ia := newIndexer(x, 0, shape, a.shape)
	ib := newIndexer(x, 1, shape, b.shape)
	cmp := kind == binLess || kind == binGreater
	if a.dt == dtFloat {
		if cmp {
			out := newBool(shape)
			for k := range out.i {
				x, y := a.f[ia.at(k)], b.f[ib.at(k)]
				if (kind == binLess && x < y) || (kind == binGreater && x > y) {
					out.i[k] = 1
				}
			}
			return out, nil
		}
		out := x.newFloat(shape)
		if binFloatFast(kind, out.f, a.f, b.f, ia, ib) {
			return out, nil
		}
		for k := range out.f {
			x, y := a.f[ia.at(k)], b.f[ib.at(k)]
			var v float32
			switch kind {
			case binAdd:
				v = x + y
			case binSub:
				v = x - y
			case binMul:
				v = x * y
			case binDiv:
				v = x / y
			case binMax:
				v = x
				if y > x || math.IsNaN(float64(y)) {
					v = y
				}
			}
			out.f[k] = v
		}
		return out, nil
	}
	if cmp {
		out := newBool(shape)
		for k := range out.i {
			x, y := a.i[ia.at(k)], b.i[ib.at(k)]
			if (kind == binLess && x < y) || (kind == binGreater && x > y) {
				out.i[k] = 1
			}
		}
		return out, nil
	}
	out := newInt(shape)
	for k := range out.i {
		x, y := a.i[ia.at(k)], b.i[ib.at(k)]
		var v int32
		switch kind {
		case binAdd:
			v = x + y
		case binSub:
			v = x - y
		case binMul:
			v = x * y
		case binDiv:
			if y == 0 {
				return nil, fmt.Errorf("integer division by zero")
			}
			v = x / y
		case binMax:
			v = max(x, y)
		}
		out.i[k] = v
	}
	return out, nil
}

// unaryFloat applies f element-wise in float64 and rounds to float32.
func unaryFloat(x *arena, a *tensor, f func(float64) float64) (*tensor, error) {
	if a.dt != dtFloat {
		return nil, fmt.Errorf("want float32, got %s", a.dt)
	}
	out := x.newFloat(cloneInts(a.shape))
	for k, v := range a.f {
		out.f[k] = float32(f(float64(v)))
	}
	return out, nil
}

type reduceKind uint8

const (
	redSum reduceKind = iota
	redMean
	redMax
	redProd
)

// fold adds v to the running reduction acc.
func fold(kind reduceKind, acc *float64, v float64) {
	switch kind {
	case redSum, redMean:
		*acc += v
	case redProd:
		*acc *= v
	case redMax:
		if v > *acc {
			*acc = v
		}
	}
}

// reduce reduces a over axes (negative allowed). Empty reductions give the
// identity (0 for sum, 1 for prod, the lowest value for max).
func reduce(x *arena, kind reduceKind, a *tensor, axes []int, keep bool) (*tensor, error) {
	r := a.rank()
	red := make([]bool, r)
	for _, ax := range axes {
		n, err := normAxis(ax, r)
		if err != nil {
			return nil, err
		}
		red[n] = true
	}
	var outShape, keptShape []int
	for k, d := range a.shape {
		if red[k] {
			keptShape = append(keptShape, 1)
			if keep {
				outShape = append(outShape, 1)
			}
			continue
		}
		keptShape = append(keptShape, d)
		outShape = append(outShape, d)
	}
	if outShape == nil {
		outShape = []int{}
	}
	nOut := numElems(keptShape)
	count := 1
	for k, d := range a.shape {
		if red[k] {
			count *= d
		}
	}
	// Map each input element to its output slot.
	ost := strides(keptShape)
	in := a.shape
	acc := make([]float64, nOut)
	switch kind {
	case redProd:
		for k := range acc {
			acc[k] = 1
		}
	case redMax:
		for k := range acc {
			acc[k] = math.Inf(-1)
			if a.dt != dtFloat {
				acc[k] = math.MinInt32
			}
		}
	}
	// Reducing trailing axes of a float tensor (a layer norm's statistics)
	// sums contiguous blocks, in the same order as the general loop.
	trailing := a.dt == dtFloat && count > 0
	for d := 1; d < r && trailing; d++ {
		trailing = red[d] || !red[d-1]
	}
	switch {
	case trailing && (kind == redSum || kind == redMean):
		// The same sums as fold's, without its switch per element.
		for o := range acc {
			s := acc[o]
			for _, x := range a.f[o*count : (o+1)*count] {
				s += float64(x)
			}
			acc[o] = s
		}
	case trailing:
		for o := range acc {
			for _, x := range a.f[o*count : (o+1)*count] {
				fold(kind, &acc[o], float64(x))
			}
		}
	default:
		ctr := make([]int, r)
		for k := range a.size() {
			o := 0
			for d := 0; d < r; d++ {
				if !red[d] {
					o += ctr[d] * ost[d]
				}
			}
			if a.dt == dtFloat {
				fold(kind, &acc[o], float64(a.f[k]))
			} else {
				fold(kind, &acc[o], float64(a.i[k]))
			}
			for d := r - 1; d >= 0; d-- {
				ctr[d]++
				if ctr[d] < in[d] {
					break
				}
				ctr[d] = 0
			}
		}
	}
	if a.dt == dtFloat {
		out := x.newFloat(outShape)
		for k, v := range acc {
			if kind == redMean {
				// TF.js divides the float32 sum by the float32 count.
				out.f[k] = float32(v) / float32(count)
				continue
			}
			out.f[k] = float32(v)
		}
		return out, nil
	}
	out := newInt(outShape)
	for k, v := range acc {
		if kind == redMean && count > 0 {
			v = math.Trunc(v / float64(count))
		}
		out.i[k] = int32(v)
	}
	return out, nil
}

// toF64 returns t's data widened to float64.
func toF64(t *tensor) []float64 {
	out := make([]float64, len(t.f))
	for k, v := range t.f {
		out[k] = float64(v)
	}
	return out
}

// gemm computes batches of C = op(A)·op(B) with float64 accumulation.
// a is [batch, m, k] (or [batch, k, m] when ta), b is [batch, k, n] (or
// [batch, n, k] when tb); bBatch is 1 when b is shared by every batch.
func gemm(a, b []float64, batch, bBatch, m, n, k int, ta, tb bool) []float32 {
	out := make([]float32, batch*m*n)
	c := make([]float64, m*n)
	tA, tB := blas.NoTrans, blas.NoTrans
	lda, ldb := k, n
	if ta {
		tA, lda = blas.Trans, m
	}
	if tb {
		tB, ldb = blas.Trans, k
	}
	for bi := 0; bi < batch; bi++ {
		bo := 0
		if bBatch > 1 {
			bo = bi * k * n
		}
		A := blas64.General{Rows: m, Cols: k, Stride: lda, Data: a[bi*m*k : (bi+1)*m*k]}
		if ta {
			A.Rows, A.Cols = k, m
		}
		B := blas64.General{Rows: k, Cols: n, Stride: ldb, Data: b[bo : bo+k*n]}
		if tb {
			B.Rows, B.Cols = n, k
		}
		C := blas64.General{Rows: m, Cols: n, Stride: n, Data: c}
		blas64.Gemm(tA, tB, 1, A, B, 0, C)
		for j, v := range c {
			out[bi*m*n+j] = float32(v)
		}
	}
	return out
}

// transpose permutes the axes of a.
func transpose(x *arena, a *tensor, perm []int) (*tensor, error) {
	r := a.rank()
	if len(perm) != r {
		return nil, fmt.Errorf("perm %v for rank %d", perm, r)
	}
	shape := make([]int, r)
	for k, p := range perm {
		if p < 0 || p >= r {
			return nil, fmt.Errorf("bad perm %v", perm)
		}
		shape[k] = a.shape[p]
	}
	out := x.newOfType(a.dt, shape)
	ist := strides(a.shape)
	pst := make([]int, r) // input stride for each output axis
	for k, p := range perm {
		pst[k] = ist[p]
	}
	ctr := make([]int, r)
	pos := 0
	n := out.size()
	for k := 0; k < n; k++ {
		if a.dt == dtFloat {
			out.f[k] = a.f[pos]
		} else {
			out.i[k] = a.i[pos]
		}
		for d := r - 1; d >= 0; d-- {
			ctr[d]++
			pos += pst[d]
			if ctr[d] < shape[d] {
				break
			}
			pos -= pst[d] * ctr[d]
			ctr[d] = 0
		}
	}
	return out, nil
}

// sliceAxes copies the box begin[d] + j*step[d] for j < size[d] out of a.
func sliceBox(x *arena, a *tensor, begin, size, step []int) *tensor {
	out := x.newOfType(a.dt, cloneInts(size))
	r := a.rank()
	ist := strides(a.shape)
	n := out.size()
	if n == 0 {
		return out
	}
	// With unit steps along the last axis, whole runs are copied at once
	// and the counter walks the axes before it.
	run, walk := 1, r
	if r > 0 && step[r-1] == 1 {
		run, walk = size[r-1], r-1
	}
	ctr := make([]int, r)
	for k := 0; k < n; k += run {
		pos := 0
		for d := 0; d < r; d++ {
			pos += (begin[d] + ctr[d]*step[d]) * ist[d]
		}
		if a.dt == dtFloat {
			copy(out.f[k:k+run], a.f[pos:pos+run])
		} else {
			copy(out.i[k:k+run], a.i[pos:pos+run])
		}
		for d := walk - 1; d >= 0; d-- {
			ctr[d]++
			if ctr[d] < size[d] {
				break
			}
			ctr[d] = 0
		}
	}
	return out
}

// concat joins ts along axis.
func concat(x *arena, ts []*tensor, axis int) (*tensor, error) {
	if len(ts) == 0 {
		return nil, fmt.Errorf("concat of nothing")
	}
	r := ts[0].rank()
	ax, err := normAxis(axis, r)
	if err != nil {
		return nil, err
	}
	shape := cloneInts(ts[0].shape)
	shape[ax] = 0
	for _, t := range ts {
		if t.rank() != r || t.dt != ts[0].dt {
			return nil, fmt.Errorf("concat of mismatched tensors")
		}
		for d := range shape {
			if d != ax && t.shape[d] != shape[d] {
				return nil, fmt.Errorf("concat shapes %v and %v on axis %d", ts[0].shape, t.shape, ax)
			}
		}
		shape[ax] += t.shape[ax]
	}
	out := x.newOfType(ts[0].dt, shape)
	outer := numElems(shape[:ax])
	pos := 0
	for o := 0; o < outer; o++ {
		for _, t := range ts {
			inner := numElems(t.shape[ax:])
			if t.dt == dtFloat {
				copy(out.f[pos:], t.f[o*inner:(o+1)*inner])
			} else {
				copy(out.i[pos:], t.i[o*inner:(o+1)*inner])
			}
			pos += inner
		}
	}
	return out, nil
}

// gather takes slices of params along axis at indices (GatherV2, batch_dims 0).
func gather(x *arena, params, indices *tensor, axis int) (*tensor, error) {
	ax, err := normAxis(axis, params.rank())
	if err != nil {
		return nil, err
	}
	idx, err := indices.ints()
	if err != nil {
		return nil, err
	}
	shape := append(append(cloneInts(params.shape[:ax]), indices.shape...), params.shape[ax+1:]...)
	out := x.newOfType(params.dt, shape)
	outer := numElems(params.shape[:ax])
	inner := numElems(params.shape[ax+1:])
	dim := params.shape[ax]
	pos := 0
	for o := 0; o < outer; o++ {
		for _, j := range idx {
			if j < 0 || j >= dim {
				return nil, fmt.Errorf("gather index %d out of range [0,%d)", j, dim)
			}
			src := (o*dim + j) * inner
			if params.dt == dtFloat {
				copy(out.f[pos:pos+inner], params.f[src:src+inner])
			} else {
				copy(out.i[pos:pos+inner], params.i[src:src+inner])
			}
			pos += inner
		}
	}
	return out, nil
}

// ndOffsets turns the last axis of indices into flat element offsets of a
// tensor of the given shape, returning the offsets and the slice size.
func ndOffsets(indices *tensor, shape []int) ([]int, int, error) {
	idx, err := indices.ints()
	if err != nil {
		return nil, 0, err
	}
	if indices.rank() == 0 {
		return nil, 0, fmt.Errorf("scalar nd indices")
	}
	depth := indices.shape[indices.rank()-1]
	if depth > len(shape) {
		return nil, 0, fmt.Errorf("index depth %d for rank %d", depth, len(shape))
	}
	st := strides(shape)
	inner := numElems(shape[depth:])
	n := 0
	if depth > 0 {
		n = len(idx) / depth
	}
	offs := make([]int, n)
	for k := 0; k < n; k++ {
		o := 0
		for d := 0; d < depth; d++ {
			j := idx[k*depth+d]
			if j < 0 || j >= shape[d] {
				return nil, 0, fmt.Errorf("nd index %d out of range [0,%d)", j, shape[d])
			}
			o += j * st[d]
		}
		offs[k] = o
	}
	return offs, inner, nil
}

func gatherNd(x *arena, params, indices *tensor) (*tensor, error) {
	offs, inner, err := ndOffsets(indices, params.shape)
	if err != nil {
		return nil, err
	}
	depth := indices.shape[indices.rank()-1]
	shape := append(cloneInts(indices.shape[:indices.rank()-1]), params.shape[depth:]...)
	out := x.newOfType(params.dt, shape)
	for k, o := range offs {
		if params.dt == dtFloat {
			copy(out.f[k*inner:(k+1)*inner], params.f[o:o+inner])
		} else {
			copy(out.i[k*inner:(k+1)*inner], params.i[o:o+inner])
		}
	}
	return out, nil
}

func scatterNd(x *arena, indices, updates *tensor, shape []int) (*tensor, error) {
	offs, inner, err := ndOffsets(indices, shape)
	if err != nil {
		return nil, err
	}
	if len(offs)*inner != updates.size() {
		return nil, fmt.Errorf("scatter of %v updates into %v", updates.shape, shape)
	}
	out := x.newOfType(updates.dt, shape)
	for k, o := range offs {
		if updates.dt == dtFloat {
			for j := 0; j < inner; j++ {
				out.f[o+j] += updates.f[k*inner+j]
			}
		} else {
			for j := 0; j < inner; j++ {
				out.i[o+j] += updates.i[k*inner+j]
			}
		}
	}
	return out, nil
}

// softmax normalises the last axis.
func softmax(x *arena, a *tensor) (*tensor, error) {
	if a.dt != dtFloat || a.rank() == 0 {
		return nil, fmt.Errorf("softmax of %s %v", a.dt, a.shape)
	}
	out := x.newFloat(cloneInts(a.shape))
	n := a.shape[a.rank()-1]
	if n == 0 {
		return out, nil
	}
	for o := 0; o < a.size()/n; o++ {
		row := a.f[o*n : (o+1)*n]
		mx := row[0]
		for _, v := range row {
			if v > mx {
				mx = v
			}
		}
		dst := out.f[o*n : (o+1)*n]
		var sum float64
		for j, v := range row {
			e := float32(math.Exp(float64(v - mx)))
			dst[j] = e
			sum += float64(e)
		}
		s := float32(sum)
		for j := range dst {
			dst[j] /= s
		}
	}
	return out, nil
}

// binFloatFast computes a float binary op without per-element dispatch for
// the layouts the Transformer uses: same shapes, a scalar, a repeating
// trailing operand (a bias) or a per-row one (a layer norm's statistics).
// It reports false, having done nothing, for any other layout. Results are
// the same float32 operations as binaryOp's general loop, element by element.
func binFloatFast(kind binKind, out, a, b []float32, ia, ib indexer) bool {
	n := len(out)
	switch {
	case ia.mode == 0 && ib.mode == 0:
		binSlices(kind, out, a[:n], b[:n])
	case ia.mode == 0 && ib.mode == 1:
		binScalar(kind, out, a[:n], b[0], false)
	case ia.mode == 1 && ib.mode == 0:
		binScalar(kind, out, b[:n], a[0], true)
	case ia.mode == 0 && ib.mode == 2:
		for lo := 0; lo < n; lo += ib.mod {
			binSlices(kind, out[lo:lo+ib.mod], a[lo:lo+ib.mod], b[:ib.mod])
		}
	case ia.mode == 2 && ib.mode == 0:
		for lo := 0; lo < n; lo += ia.mod {
			binSlices(kind, out[lo:lo+ia.mod], a[:ia.mod], b[lo:lo+ia.mod])
		}
	case ia.mode == 0 && ib.mode == 4:
		for lo, row := 0, 0; lo < n; lo, row = lo+ib.mod, row+1 {
			binScalar(kind, out[lo:lo+ib.mod], a[lo:lo+ib.mod], b[row], false)
		}
	case ia.mode == 4 && ib.mode == 0:
		for lo, row := 0, 0; lo < n; lo, row = lo+ia.mod, row+1 {
			binScalar(kind, out[lo:lo+ia.mod], b[lo:lo+ia.mod], a[row], true)
		}
	default:
		return false
	}
	return true
}

func maxNaN(x, y float32) float32 {
	if y > x || y != y {
		return y
	}
	return x
}

// vecMin is the length from which binSlices and binScalar hand additions,
// subtractions and multiplications to vek's AVX2 loops: element-wise IEEE
// float32 operations, so the same results as the plain loops.
const vecMin = 32

// binSlices sets out[k] = x[k] op y[k]. out must not overlap x or y.
func binSlices(kind binKind, out, x, y []float32) {
	y = y[:len(x)]
	out = out[:len(x)]
	if len(x) >= vecMin {
		switch kind {
		case binAdd:
			vek32.Add_Into(out, x, y)
			return
		case binSub:
			vek32.Sub_Into(out, x, y)
			return
		case binMul:
			vek32.Mul_Into(out, x, y)
			return
		}
	}
	switch kind {
	case binAdd:
		for k := range x {
			out[k] = x[k] + y[k]
		}
	case binSub:
		for k := range x {
			out[k] = x[k] - y[k]
		}
	case binMul:
		for k := range x {
			out[k] = x[k] * y[k]
		}
	case binDiv:
		for k := range x {
			out[k] = x[k] / y[k]
		}
	case binMax:
		for k := range x {
			out[k] = maxNaN(x[k], y[k])
		}
	}
}

// binScalar sets out[k] = x[k] op s, or s op x[k] when swapped. out must
// not overlap x.
func binScalar(kind binKind, out, x []float32, s float32, swapped bool) {
	out = out[:len(x)]
	if len(x) >= vecMin {
		switch {
		case kind == binAdd:
			vek32.AddNumber_Into(out, x, s)
			return
		case kind == binMul:
			vek32.MulNumber_Into(out, x, s)
			return
		case kind == binSub && !swapped:
			vek32.SubNumber_Into(out, x, s)
			return
		}
	}
	switch {
	case kind == binAdd:
		for k := range x {
			out[k] = x[k] + s
		}
	case kind == binMul:
		for k := range x {
			out[k] = x[k] * s
		}
	case kind == binSub && !swapped:
		for k := range x {
			out[k] = x[k] - s
		}
	case kind == binSub:
		for k := range x {
			out[k] = s - x[k]
		}
	case kind == binDiv && !swapped:
		for k := range x {
			out[k] = x[k] / s
		}
	case kind == binDiv:
		for k := range x {
			out[k] = s / x[k]
		}
	case kind == binMax && !swapped:
		for k := range x {
			out[k] = maxNaN(x[k], s)
		}
	case kind == binMax:
		for k := range x {
			out[k] = maxNaN(s, x[k])
		}
	}
}
