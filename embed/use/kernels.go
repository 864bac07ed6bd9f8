package use

import (
	"errors"
	"fmt"
	"math"

	"github.com/viterin/vek/vek32"
)

// kernel runs one op on its inputs.
type kernel func(x *arena, n *node, in []*tensor) ([]*tensor, error)

var errArity = errors.New("wrong number of inputs")

func one(t *tensor, err error) ([]*tensor, error) {
	if err != nil {
		return nil, err
	}
	return []*tensor{t}, nil
}

func binKernel(kind binKind) kernel {
	return func(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
		if len(in) != 2 {
			return nil, errArity
		}
		return one(binaryOp(x, kind, in[0], in[1]))
	}
}

func unaryKernel(f func(float64) float64) kernel {
	return func(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
		if len(in) != 1 {
			return nil, errArity
		}
		return one(unaryFloat(x, in[0], f))
	}
}

func reduceKernel(kind reduceKind) kernel {
	return func(x *arena, n *node, in []*tensor) ([]*tensor, error) {
		if len(in) != 2 {
			return nil, errArity
		}
		axes, err := in[1].ints()
		if err != nil {
			return nil, err
		}
		return one(reduce(x, kind, in[0], axes, n.boolAttr("keep_dims")))
	}
}

// kernels lists every op the runner supports.
var kernels map[string]kernel

func init() {
	kernels = map[string]kernel{
		"Add":           binKernel(binAdd),
		"AddV2":         binKernel(binAdd),
		"BiasAdd":       binKernel(binAdd), // NHWC: bias broadcasts on the last axis
		"Sub":           binKernel(binSub),
		"Mul":           binKernel(binMul),
		"RealDiv":       binKernel(binDiv),
		"Maximum":       binKernel(binMax),
		"Less":          binKernel(binLess),
		"Greater":       binKernel(binGreater),
		"Sin":           unaryKernel(math.Sin),
		"Cos":           unaryKernel(math.Cos),
		"Tanh":          unaryKernel(math.Tanh),
		"Square":        unaryKernel(func(x float64) float64 { return x * x }),
		"Rsqrt":         unaryKernel(func(x float64) float64 { return 1 / math.Sqrt(x) }),
		"Relu":          kRelu,
		"Sum":           reduceKernel(redSum),
		"Mean":          reduceKernel(redMean),
		"Max":           reduceKernel(redMax),
		"Prod":          reduceKernel(redProd),
		"Softmax":       func(x *arena, _ *node, in []*tensor) ([]*tensor, error) { return one(softmax(x, in[0])) },
		"LogicalNot":    kLogicalNot,
		"Cast":          kCast,
		"Shape":         kShape,
		"Reshape":       kReshape,
		"ExpandDims":    kExpandDims,
		"Squeeze":       kSqueeze,
		"Transpose":     kTranspose,
		"ConcatV2":      kConcat,
		"Pack":          kPack,
		"SplitV":        kSplitV,
		"Slice":         kSlice,
		"StridedSlice":  kStridedSlice,
		"GatherV2":      kGather,
		"GatherNd":      kGatherNd,
		"ScatterNd":     kScatterNd,
		"SparseToDense": kSparseToDense,
		"Where":         kWhere,
		"Range":         kRange,
		"MatMul":        kMatMul,
		"BatchMatMul":   kBatchMatMul,
		"BatchMatMulV2": kBatchMatMul,
		"Conv2D":        kConv2D,
	}
}

func kLogicalNot(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 1 || in[0].dt != dtBool {
		return nil, errors.New("want one bool input")
	}
	out := newBool(cloneInts(in[0].shape))
	for k, v := range in[0].i {
		if v == 0 {
			out.i[k] = 1
		}
	}
	return one(out, nil)
}

func kCast(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 1 {
		return nil, errArity
	}
	dst, err := n.attrs["DstT"].dtype()
	if err != nil {
		return nil, err
	}
	a := in[0]
	out := x.newOfType(dst, cloneInts(a.shape))
	switch {
	case dst == dtFloat && a.dt == dtFloat:
		copy(out.f, a.f)
	case dst == dtFloat:
		for k, v := range a.i {
			out.f[k] = float32(v)
		}
	case a.dt == dtFloat:
		for k, v := range a.f {
			if dst == dtBool {
				if v != 0 {
					out.i[k] = 1
				}
				continue
			}
			out.i[k] = int32(v) // truncation, as TF does
		}
	default:
		for k, v := range a.i {
			if dst == dtBool && v != 0 {
				v = 1
			}
			out.i[k] = v
		}
	}
	return one(out, nil)
}

func kShape(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 1 {
		return nil, errArity
	}
	out := newInt([]int{in[0].rank()})
	for k, d := range in[0].shape {
		out.i[k] = int32(d)
	}
	return one(out, nil)
}

func kReshape(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 2 {
		return nil, errArity
	}
	shape, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	infer, known := -1, 1
	for k, d := range shape {
		if d == -1 {
			if infer >= 0 {
				return nil, errors.New("several -1 in reshape")
			}
			infer = k
			continue
		}
		known *= d
	}
	if infer >= 0 {
		if known == 0 {
			shape[infer] = 0
		} else {
			shape[infer] = in[0].size() / known
		}
	}
	if numElems(shape) != in[0].size() {
		return nil, fmt.Errorf("reshape %v to %v", in[0].shape, shape)
	}
	return one(in[0].reshaped(shape), nil)
}

func kExpandDims(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 2 {
		return nil, errArity
	}
	d, err := in[1].scalarInt()
	if err != nil {
		return nil, err
	}
	r := in[0].rank()
	if d < 0 {
		d += r + 1
	}
	if d < 0 || d > r {
		return nil, fmt.Errorf("expand dim %d for rank %d", d, r)
	}
	shape := append(append(cloneInts(in[0].shape[:d]), 1), in[0].shape[d:]...)
	return one(in[0].reshaped(shape), nil)
}

func kSqueeze(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 1 {
		return nil, errArity
	}
	dims, err := n.attrs["squeeze_dims"].ints()
	if err != nil {
		return nil, err
	}
	a := in[0]
	drop := make([]bool, a.rank())
	for _, d := range dims {
		nd, err := normAxis(d, a.rank())
		if err != nil {
			return nil, err
		}
		if a.shape[nd] != 1 {
			return nil, fmt.Errorf("squeeze dim %d of %v", d, a.shape)
		}
		drop[nd] = true
	}
	shape := []int{}
	for k, d := range a.shape {
		if drop[k] || (len(dims) == 0 && d == 1) {
			continue
		}
		shape = append(shape, d)
	}
	return one(a.reshaped(shape), nil)
}

func kTranspose(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 2 {
		return nil, errArity
	}
	perm, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	return one(transpose(x, in[0], perm))
}

func kConcat(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) < 2 {
		return nil, errArity
	}
	axis, err := in[len(in)-1].scalarInt()
	if err != nil {
		return nil, err
	}
	return one(concat(x, in[:len(in)-1], axis))
}

func kPack(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) == 0 {
		return nil, errArity
	}
	axis, err := n.intAttr("axis", 0)
	if err != nil {
		return nil, err
	}
	r := in[0].rank()
	if axis < 0 {
		axis += r + 1
	}
	if axis < 0 || axis > r {
		return nil, fmt.Errorf("pack axis %d for rank %d", axis, r)
	}
	parts := make([]*tensor, len(in))
	for k, t := range in {
		if t.rank() != r {
			return nil, errors.New("pack of mismatched ranks")
		}
		parts[k] = t.reshaped(append(append(cloneInts(t.shape[:axis]), 1), t.shape[axis:]...))
	}
	if len(parts) == 1 {
		return one(parts[0], nil)
	}
	return one(concat(x, parts, axis))
}

func kSplitV(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 3 {
		return nil, errArity
	}
	sizes, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	axis, err := in[2].scalarInt()
	if err != nil {
		return nil, err
	}
	a := in[0]
	ax, err := normAxis(axis, a.rank())
	if err != nil {
		return nil, err
	}
	if len(sizes) != n.nOut {
		return nil, fmt.Errorf("%d sizes for %d outputs", len(sizes), n.nOut)
	}
	infer, total := -1, 0
	for k, s := range sizes {
		if s == -1 {
			infer = k
			continue
		}
		total += s
	}
	if infer >= 0 {
		sizes[infer] = a.shape[ax] - total
		total = a.shape[ax]
	}
	if total != a.shape[ax] {
		return nil, fmt.Errorf("split sizes %v of dim %d", sizes, a.shape[ax])
	}
	outs := make([]*tensor, len(sizes))
	begin := make([]int, a.rank())
	step := make([]int, a.rank())
	for k := range step {
		step[k] = 1
	}
	for k, s := range sizes {
		size := cloneInts(a.shape)
		size[ax] = s
		outs[k] = sliceBox(x, a, begin, size, step)
		begin[ax] += s
	}
	return outs, nil
}

func kSlice(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 3 {
		return nil, errArity
	}
	a := in[0]
	begin, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	size, err := in[2].ints()
	if err != nil {
		return nil, err
	}
	if len(begin) != a.rank() || len(size) != a.rank() {
		return nil, fmt.Errorf("slice begin %v size %v of %v", begin, size, a.shape)
	}
	step := make([]int, a.rank())
	for d := range size {
		step[d] = 1
		if size[d] == -1 {
			size[d] = a.shape[d] - begin[d]
		}
		if begin[d] < 0 || size[d] < 0 || begin[d]+size[d] > a.shape[d] {
			return nil, fmt.Errorf("slice begin %v size %v of %v", begin, size, a.shape)
		}
	}
	return one(sliceBox(x, a, begin, size, step), nil)
}

func kStridedSlice(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 4 {
		return nil, errArity
	}
	a := in[0]
	begin, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	end, err := in[2].ints()
	if err != nil {
		return nil, err
	}
	st, err := in[3].ints()
	if err != nil {
		return nil, err
	}
	masks := map[string]int{}
	for _, m := range []string{"begin_mask", "end_mask", "shrink_axis_mask", "ellipsis_mask", "new_axis_mask"} {
		v, err := n.intAttr(m, 0)
		if err != nil {
			return nil, err
		}
		masks[m] = v
	}
	if masks["ellipsis_mask"] != 0 || masks["new_axis_mask"] != 0 {
		return nil, errors.New("ellipsis and new-axis masks are not supported")
	}
	if len(begin) != len(end) || len(begin) != len(st) || len(begin) > a.rank() {
		return nil, fmt.Errorf("strided slice spec of length %d for rank %d", len(begin), a.rank())
	}
	r := a.rank()
	b0 := make([]int, r)
	size := make([]int, r)
	step := make([]int, r)
	var shape []int
	for d := 0; d < r; d++ {
		dim := a.shape[d]
		if d >= len(begin) {
			b0[d], size[d], step[d] = 0, dim, 1
			shape = append(shape, dim)
			continue
		}
		s := st[d]
		if s == 0 {
			return nil, errors.New("zero stride")
		}
		bit := 1 << d
		if masks["shrink_axis_mask"]&bit != 0 {
			b := begin[d]
			if b < 0 {
				b += dim
			}
			if b < 0 || b >= dim {
				return nil, fmt.Errorf("shrink index %d of dim %d", begin[d], dim)
			}
			b0[d], size[d], step[d] = b, 1, 1
			continue
		}
		lo, hi := 0, dim // clamp range for s > 0
		if s < 0 {
			lo, hi = -1, dim-1
		}
		clamp := func(v int) int {
			if v < 0 {
				v += dim
			}
			return min(max(v, lo), hi)
		}
		var b, e int
		if masks["begin_mask"]&bit != 0 {
			b = 0
			if s < 0 {
				b = dim - 1
			}
		} else {
			b = clamp(begin[d])
		}
		if masks["end_mask"]&bit != 0 {
			e = dim
			if s < 0 {
				e = -1
			}
		} else {
			e = clamp(end[d])
		}
		cnt := 0
		if (s > 0 && e > b) || (s < 0 && e < b) {
			cnt = (e - b + s - sign(s)) / s
		}
		b0[d], size[d], step[d] = b, cnt, s
		shape = append(shape, cnt)
	}
	out := sliceBox(x, a, b0, size, step)
	if shape == nil {
		shape = []int{}
	}
	return one(out.reshaped(shape), nil)
}

func sign(v int) int {
	if v < 0 {
		return -1
	}
	return 1
}

func kGather(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 3 {
		return nil, errArity
	}
	if bd, err := n.intAttr("batch_dims", 0); err != nil || bd != 0 {
		return nil, errors.New("batch_dims is not supported")
	}
	axis, err := in[2].scalarInt()
	if err != nil {
		return nil, err
	}
	return one(gather(x, in[0], in[1], axis))
}

func kGatherNd(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 2 {
		return nil, errArity
	}
	return one(gatherNd(x, in[0], in[1]))
}

func kScatterNd(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 3 {
		return nil, errArity
	}
	shape, err := in[2].ints()
	if err != nil {
		return nil, err
	}
	return one(scatterNd(x, in[0], in[1], shape))
}

func kSparseToDense(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 4 {
		return nil, errArity
	}
	idx, shapeT, vals, def := in[0], in[1], in[2], in[3]
	shape, err := shapeT.ints()
	if err != nil {
		return nil, err
	}
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dense shape %v", shape)
		}
	}
	if vals.dt != def.dt || def.size() != 1 {
		return nil, errors.New("bad default value")
	}
	nd := idx
	if idx.rank() < 2 {
		nd = idx.reshaped([]int{idx.size(), 1})
	}
	offs, inner, err := ndOffsets(nd, shape)
	if err != nil {
		return nil, err
	}
	if inner != 1 {
		return nil, fmt.Errorf("sparse indices of depth %d for dense rank %d", nd.shape[1], len(shape))
	}
	out := x.newOfType(vals.dt, shape)
	for k := range max(len(out.f), len(out.i)) {
		if out.dt == dtFloat {
			out.f[k] = def.f[0]
		} else {
			out.i[k] = def.i[0]
		}
	}
	for k, o := range offs {
		j := k
		if vals.size() == 1 {
			j = 0
		} else if k >= vals.size() {
			return nil, errors.New("fewer values than indices")
		}
		if out.dt == dtFloat {
			out.f[o] = vals.f[j]
		} else {
			out.i[o] = vals.i[j]
		}
	}
	return one(out, nil)
}

func kWhere(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 1 {
		return nil, errArity
	}
	a := in[0]
	r := a.rank()
	var coords []int32
	ctr := make([]int, r)
	n := a.size()
	for k := 0; k < n; k++ {
		var true_ bool
		if a.dt == dtFloat {
			true_ = a.f[k] != 0
		} else {
			true_ = a.i[k] != 0
		}
		if true_ {
			for _, c := range ctr {
				coords = append(coords, int32(c))
			}
		}
		for d := r - 1; d >= 0; d-- {
			ctr[d]++
			if ctr[d] < a.shape[d] {
				break
			}
			ctr[d] = 0
		}
	}
	out := newInt([]int{len(coords) / max(r, 1), r})
	copy(out.i, coords)
	return one(out, nil)
}

func kRange(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 3 {
		return nil, errArity
	}
	if in[0].dt == dtFloat {
		return nil, errors.New("float range is not supported")
	}
	var v [3]int
	for k := range v {
		x, err := in[k].scalarInt()
		if err != nil {
			return nil, err
		}
		v[k] = x
	}
	start, limit, delta := v[0], v[1], v[2]
	if delta == 0 {
		return nil, errors.New("zero delta")
	}
	var vals []int32
	for x := start; (delta > 0 && x < limit) || (delta < 0 && x > limit); x += delta {
		vals = append(vals, int32(x))
	}
	out := newInt([]int{len(vals)})
	copy(out.i, vals)
	return one(out, nil)
}

func kMatMul(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 2 {
		return nil, errArity
	}
	a, b := in[0], in[1]
	if a.rank() != 2 || b.rank() != 2 || a.dt != dtFloat || b.dt != dtFloat {
		return nil, fmt.Errorf("matmul of %v and %v", a.shape, b.shape)
	}
	ta, tb := n.boolAttr("transpose_a"), n.boolAttr("transpose_b")
	if !ta && !tb {
		return one(dense(x, a, b))
	}
	return one(batchMatMul(x, a, b, ta, tb))
}

func kBatchMatMul(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 2 {
		return nil, errArity
	}
	return one(batchMatMul(x, in[0], in[1], n.boolAttr("adj_x"), n.boolAttr("adj_y")))
}

// batchMatMul multiplies the last two axes; leading axes are batch axes that
// must match, or b has none.
func batchMatMul(x *arena, a, b *tensor, ta, tb bool) (*tensor, error) {
	ra, rb := a.rank(), b.rank()
	if ra < 2 || rb < 2 || a.dt != dtFloat || b.dt != dtFloat {
		return nil, fmt.Errorf("batch matmul of %v and %v", a.shape, b.shape)
	}
	m, k := a.shape[ra-2], a.shape[ra-1]
	if ta {
		m, k = k, m
	}
	k2, nn := b.shape[rb-2], b.shape[rb-1]
	if tb {
		k2, nn = nn, k2
	}
	if k != k2 {
		return nil, fmt.Errorf("matmul inner dims %v and %v", a.shape, b.shape)
	}
	batch := numElems(a.shape[:ra-2])
	bBatch := numElems(b.shape[:rb-2])
	if bBatch != 1 && bBatch != batch {
		return nil, fmt.Errorf("matmul batch dims %v and %v", a.shape, b.shape)
	}
	shape := append(cloneInts(a.shape[:ra-2]), m, nn)
	out := &tensor{dt: dtFloat, shape: shape}
	if batch*m*nn == 0 || k == 0 {
		out.f = x.floats(batch * m * nn)
		return out, nil
	}
	if !ta {
		// Float32 like TF.js, without widening copies: weight matrices and
		// attention products alike. The AVX2 float32 kernel is several
		// times faster than float64 and stays within ~3e-7 of TF.js on the
		// final vector.
		out.f = x.floats(batch * m * nn)
		for bi := 0; bi < batch; bi++ {
			bo := 0
			if bBatch > 1 {
				bo = bi * k * nn
			}
			A, B, C := a.f[bi*m*k:(bi+1)*m*k], b.f[bo:bo+k*nn], out.f[bi*m*nn:(bi+1)*m*nn]
			if !tb {
				vek32.MatMul_Into(C, A, B, k)
				continue
			}
			for i := 0; i < m; i++ { // B is [nn, k]: C[i][j] = A[i]·B[j]
				row := A[i*k : (i+1)*k]
				for j := 0; j < nn; j++ {
					C[i*nn+j] = vek32.Dot(row, B[j*k:(j+1)*k])
				}
			}
		}
		return out, nil
	}
	out.f = gemm(toF64(a), toF64(b), batch, bBatch, m, nn, k, ta, tb)
	return out, nil
}

// kConv2D supports the 1x1, stride-1 NHWC convolutions the Transformer uses
// as dense layers.
func kConv2D(x *arena, n *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 2 {
		return nil, errArity
	}
	a, w := in[0], in[1]
	if f := n.attrs["data_format"].S; len(f) > 0 && string(bytesOf(f)) != "NHWC" {
		return nil, fmt.Errorf("data format %q is not supported", bytesOf(f))
	}
	st, err := n.attrs["strides"].ints()
	if err != nil {
		return nil, err
	}
	for _, s := range st {
		if s != 1 {
			return nil, fmt.Errorf("strides %v are not supported", st)
		}
	}
	if a.rank() != 4 || w.rank() != 4 || w.shape[0] != 1 || w.shape[1] != 1 || w.shape[2] != a.shape[3] {
		return nil, fmt.Errorf("only 1x1 convolutions are supported: input %v filter %v", a.shape, w.shape)
	}
	c, o := w.shape[2], w.shape[3]
	rows := a.shape[0] * a.shape[1] * a.shape[2]
	flat := a.reshaped([]int{rows, c})
	res, err := dense(x, flat, w.reshaped([]int{c, o}))
	if err != nil {
		return nil, err
	}
	return one(res.reshaped([]int{a.shape[0], a.shape[1], a.shape[2], o}), nil)
}

func bytesOf(s []int) []byte {
	b := make([]byte, len(s))
	for k, v := range s {
		b[k] = byte(v)
	}
	return b
}

// dense multiplies a [m, k] by w [k, n]: with the assembly kernel when w
// is a packed weight matrix (graph.packWeights), else as batchMatMul does.
func dense(x *arena, a, w *tensor) (*tensor, error) {
	p := w.packed
	if p == nil {
		return batchMatMul(x, a, w, false, false)
	}
	if a.rank() != 2 || a.dt != dtFloat || a.shape[1] != p.k || w.rank() != 2 || w.shape[0] != p.k || w.shape[1] != p.n {
		return nil, fmt.Errorf("matmul of %v and %v", a.shape, w.shape)
	}
	m := a.shape[0]
	out := x.newFloat([]int{m, p.n})
	if m > 0 && p.k > 0 {
		denseMatMul(out.f, a.f, m, p)
	}
	return out, nil
}

// kRelu is max(x, 0) in float32, as unaryKernel(math.Max) would round it:
// NaN stays NaN and -0 becomes 0.
func kRelu(x *arena, _ *node, in []*tensor) ([]*tensor, error) {
	if len(in) != 1 {
		return nil, errArity
	}
	a := in[0]
	if a.dt != dtFloat {
		return nil, fmt.Errorf("want float32, got %s", a.dt)
	}
	out := x.newFloat(cloneInts(a.shape))
	for k, v := range a.f {
		if v > 0 || v != v {
			out.f[k] = v
		}
	}
	return one(out, nil)
}
