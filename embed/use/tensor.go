package use

import (
	"fmt"
)

// dtype is the element type of a tensor. TF.js stores int64 as int32 and so
// does this runner; bool tensors keep 0/1 in the int slice.
type dtype uint8

const (
	dtFloat dtype = iota + 1
	dtInt
	dtBool
)

func (d dtype) String() string {
	switch d {
	case dtFloat:
		return "float32"
	case dtInt:
		return "int32"
	case dtBool:
		return "bool"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// tensor is a dense row-major n-d array. Exactly one of f (float32) and i
// (int32, bool) holds the data.
type tensor struct {
	dt    dtype
	shape []int
	f     []float32
	i     []int32
	// packed is set, and f is nil, for a constant weight matrix that only
	// dense layers read: it is held packed for the assembly kernel
	// (sgemm.go) instead.
	packed *panels
}

func numElems(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func newFloat(shape []int) *tensor {
	return &tensor{dt: dtFloat, shape: shape, f: make([]float32, numElems(shape))}
}

func newInt(shape []int) *tensor {
	return &tensor{dt: dtInt, shape: shape, i: make([]int32, numElems(shape))}
}

func newBool(shape []int) *tensor {
	return &tensor{dt: dtBool, shape: shape, i: make([]int32, numElems(shape))}
}

func newOfType(dt dtype, shape []int) *tensor {
	switch dt {
	case dtFloat:
		return newFloat(shape)
	case dtBool:
		return newBool(shape)
	default:
		return newInt(shape)
	}
}

func (t *tensor) size() int { return numElems(t.shape) }

func (t *tensor) rank() int { return len(t.shape) }

// ints returns the tensor's values as Go ints; it fails on float tensors.
func (t *tensor) ints() ([]int, error) {
	if t.dt == dtFloat {
		return nil, fmt.Errorf("want an int tensor, got %s", t.dt)
	}
	out := make([]int, len(t.i))
	for k, v := range t.i {
		out[k] = int(v)
	}
	return out, nil
}

// scalarInt returns the single value of a scalar or one-element int tensor.
func (t *tensor) scalarInt() (int, error) {
	v, err := t.ints()
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("want one value, got shape %v", t.shape)
	}
	return v[0], nil
}

// reshaped returns a tensor sharing t's data with a new shape.
func (t *tensor) reshaped(shape []int) *tensor {
	return &tensor{dt: t.dt, shape: shape, f: t.f, i: t.i, packed: t.packed}
}

func strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for k := len(shape) - 1; k >= 0; k-- {
		s[k] = acc
		acc *= shape[k]
	}
	return s
}

func normAxis(axis, rank int) (int, error) {
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	return axis, nil
}

func cloneInts(s []int) []int { return append([]int(nil), s...) }
