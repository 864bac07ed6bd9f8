package use

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// writeModel writes a tiny TF.js graph model: y = Relu(x·W + b), then a
// keep-dims Sum over axis 1, with W [3,2] and b [2] in one shard.
func writeModel(t *testing.T, op string, weights []float32) string {
	t.Helper()
	dir := t.TempDir()
	model := `{
 "format": "graph-model",
 "modelTopology": {"node": [
  {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"}}},
  {"name": "w", "op": "Const", "attr": {}},
  {"name": "b", "op": "Const", "attr": {}},
  {"name": "axis", "op": "Const", "attr": {}},
  {"name": "mm", "op": "MatMul", "input": ["x", "w"], "attr": {"transpose_a": {"b": false}, "transpose_b": {"b": false}}},
  {"name": "add", "op": "BiasAdd", "input": ["mm", "b", "^x"]},
  {"name": "act", "op": "` + op + `", "input": ["add"]},
  {"name": "out", "op": "Sum", "input": ["act", "axis"], "attr": {"keep_dims": {"b": true}}}
 ]},
 "weightsManifest": [{"paths": ["group1-shard1of1"], "weights": [
  {"name": "w", "shape": [3, 2], "dtype": "float32"},
  {"name": "b", "shape": [2], "dtype": "float32"},
  {"name": "axis", "shape": [1], "dtype": "int32"}
 ]}]
}`
	if err := os.WriteFile(filepath.Join(dir, "model.json"), []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, v := range weights {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	buf = binary.LittleEndian.AppendUint32(buf, 1) // axis
	if err := os.WriteFile(filepath.Join(dir, "group1-shard1of1"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGraphRunsTinyModel(t *testing.T) {
	// W = [[1,0],[0,1],[1,1]], b = [0,-10]
	dir := writeModel(t, "Relu", []float32{1, 0, 0, 1, 1, 1, 0, -10})
	g, err := loadGraph(dir)
	if err != nil {
		t.Fatal(err)
	}
	x := newFloat([]int{2, 3})
	copy(x.f, []float32{1, 2, 3, 4, 5, 6})
	out, err := g.run(map[string]*tensor{"x": x}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Row 1: x·W = [4,5] + b = [4,-5] → relu [4,0] → 4.
	// Row 2: [10,11] + b = [10,1] → 11.
	if !reflect.DeepEqual(out.shape, []int{2, 1}) || !reflect.DeepEqual(out.f, []float32{4, 11}) {
		t.Fatalf("got %v %v", out.shape, out.f)
	}
	if _, err := g.run(nil, nil); err == nil {
		t.Fatal("run without inputs succeeded")
	}
}

func TestLoadGraphErrors(t *testing.T) {
	t.Run("unsupported op", func(t *testing.T) {
		dir := writeModel(t, "Erf", make([]float32, 8))
		if _, err := loadGraph(dir); !errors.Is(err, ErrBadModel) {
			t.Fatalf("got %v, want ErrBadModel", err)
		}
	})
	t.Run("short weights", func(t *testing.T) {
		dir := writeModel(t, "Relu", make([]float32, 8))
		if err := os.WriteFile(filepath.Join(dir, "group1-shard1of1"), []byte{1, 2, 3}, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadGraph(dir); !errors.Is(err, ErrBadModel) {
			t.Fatalf("got %v, want ErrBadModel", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		if _, err := Load(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got %v, want ErrNotExist", err)
		}
	})
}

func TestDecodeQuantizedWeight(t *testing.T) {
	min, scale := -1.0, 0.5
	w := weightSpec{Name: "q", Shape: []int{3}, Dtype: "float32"}
	w.Quantization = &struct {
		Dtype string   `json:"dtype"`
		Min   *float64 `json:"min"`
		Scale *float64 `json:"scale"`
	}{Dtype: "uint8", Min: &min, Scale: &scale}
	got, n, err := decodeWeight(w, []byte{0, 2, 4, 99})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || !reflect.DeepEqual(got.f, []float32{-1, 0, 1}) {
		t.Fatalf("got %v (%d bytes)", got.f, n)
	}
}

func ints(shape []int, v ...int32) *tensor {
	t := newInt(shape)
	copy(t.i, v)
	return t
}

func floats(shape []int, v ...float32) *tensor {
	t := newFloat(shape)
	copy(t.f, v)
	return t
}

func attrs(kv map[string]string) map[string]attr {
	out := map[string]attr{}
	for k, v := range kv {
		s := v
		out[k] = attr{I: &s}
	}
	return out
}

func TestKernels(t *testing.T) {
	tests := []struct {
		name  string
		op    string
		attrs map[string]attr
		in    []*tensor
		shape []int
		f     []float32
		i     []int32
	}{
		{"add broadcast row", "Add", nil, []*tensor{floats([]int{2, 2}, 1, 2, 3, 4), floats([]int{2}, 10, 20)}, []int{2, 2}, []float32{11, 22, 13, 24}, nil},
		{"mul broadcast column", "Mul", nil, []*tensor{floats([]int{2, 2}, 1, 2, 3, 4), floats([]int{2, 1}, 2, 3)}, []int{2, 2}, []float32{2, 4, 9, 12}, nil},
		{"sub per-row statistic", "Sub", nil, []*tensor{floats([]int{1, 2, 1, 3}, 1, 2, 3, 4, 5, 6), floats([]int{1, 2, 1, 1}, 1, 4)}, []int{1, 2, 1, 3}, []float32{0, 1, 2, 0, 1, 2}, nil},
		{"add leading batch column", "Add", nil, []*tensor{floats([]int{2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8), floats([]int{2, 1}, 10, 20)}, []int{2, 2, 2}, []float32{11, 12, 23, 24, 15, 16, 27, 28}, nil},
		{"less ints", "Less", nil, []*tensor{ints([]int{3}, 1, 5, 9), ints(nil, 5)}, []int{3}, nil, []int32{1, 0, 0}},
		{"maximum ints", "Maximum", nil, []*tensor{ints([]int{2}, 0, 0), ints([]int{2}, 3, -1)}, []int{2}, nil, []int32{3, 0}},
		{"mean keep", "Mean", map[string]attr{"keep_dims": {B: ptr(true)}}, []*tensor{floats([]int{2, 2}, 1, 2, 3, 5), ints([]int{1}, -1)}, []int{2, 1}, []float32{1.5, 4}, nil},
		{"max empty is lowest", "Max", nil, []*tensor{ints([]int{0}), ints(nil, 0)}, []int{}, nil, []int32{math.MinInt32}},
		{"prod", "Prod", nil, []*tensor{ints([]int{3}, 2, 3, 4), ints([]int{1}, 0)}, []int{}, nil, []int32{24}},
		{"where", "Where", nil, []*tensor{ints([]int{2, 2}, 0, 1, 1, 0)}, []int{2, 2}, nil, []int32{0, 1, 1, 0}},
		{"strided shrink column", "StridedSlice", attrs(map[string]string{"begin_mask": "1", "end_mask": "1", "shrink_axis_mask": "2"}),
			[]*tensor{ints([]int{3, 2}, 0, 10, 1, 11, 2, 12), ints([]int{2}, 0, 1), ints([]int{2}, 0, 2), ints([]int{2}, 1, 1)}, []int{3}, nil, []int32{10, 11, 12}},
		{"strided reverse", "StridedSlice", attrs(map[string]string{"begin_mask": "1", "end_mask": "1"}),
			[]*tensor{ints([]int{4}, 1, 2, 3, 4), ints([]int{1}, 0), ints([]int{1}, 0), ints([]int{1}, -1)}, []int{4}, nil, []int32{4, 3, 2, 1}},
		{"strided negative begin", "StridedSlice", attrs(map[string]string{"end_mask": "1"}),
			[]*tensor{ints([]int{4}, 1, 2, 3, 4), ints([]int{1}, -2), ints([]int{1}, 0), ints([]int{1}, 1)}, []int{2}, nil, []int32{3, 4}},
		{"sparse to dense", "SparseToDense", nil, []*tensor{ints([]int{2, 2}, 0, 1, 1, 0), ints([]int{2}, 2, 3), ints([]int{2}, 7, 8), ints(nil, 0)}, []int{2, 3}, nil, []int32{0, 7, 0, 8, 0, 0}},
		{"scatter nd sums duplicates", "ScatterNd", nil, []*tensor{ints([]int{2, 1}, 1, 1), floats([]int{2}, 1, 2), ints([]int{1}, 3)}, []int{3}, []float32{0, 3, 0}, nil},
		{"scatter nd shape mismatch fails", "ScatterNd", nil, []*tensor{ints([]int{2, 1}, 1, 1), floats([]int{2, 2}, 1, 2, 3, 4), ints([]int{1}, 3)}, nil, nil, nil},
		{"gather out of range fails", "GatherV2", nil, []*tensor{ints([]int{2}, 1, 2), ints([]int{1}, 2), ints(nil, 0)}, nil, nil, nil},
		{"gather nd", "GatherNd", nil, []*tensor{floats([]int{2, 2}, 1, 2, 3, 4), ints([]int{2, 2}, 1, 0, 0, 1)}, []int{2}, []float32{3, 2}, nil},
		{"gather axis 1", "GatherV2", nil, []*tensor{ints([]int{2, 3}, 1, 2, 3, 4, 5, 6), ints([]int{2}, 2, 0), ints(nil, 1)}, []int{2, 2}, nil, []int32{3, 1, 6, 4}},
		{"transpose", "Transpose", nil, []*tensor{ints([]int{2, 3}, 1, 2, 3, 4, 5, 6), ints([]int{2}, 1, 0)}, []int{3, 2}, nil, []int32{1, 4, 2, 5, 3, 6}},
		{"concat axis 1", "ConcatV2", nil, []*tensor{ints([]int{2, 1}, 1, 2), ints([]int{2, 2}, 3, 4, 5, 6), ints(nil, -1)}, []int{2, 3}, nil, []int32{1, 3, 4, 2, 5, 6}},
		{"range", "Range", nil, []*tensor{ints(nil, 0), ints(nil, 5), ints(nil, 2)}, []int{3}, nil, []int32{0, 2, 4}},
		{"reshape infer", "Reshape", nil, []*tensor{ints([]int{2, 3}, 1, 2, 3, 4, 5, 6), ints([]int{2}, -1, 2)}, []int{3, 2}, nil, []int32{1, 2, 3, 4, 5, 6}},
		{"slice", "Slice", nil, []*tensor{ints([]int{2, 3}, 1, 2, 3, 4, 5, 6), ints([]int{2}, 1, 1), ints([]int{2}, -1, 2)}, []int{1, 2}, nil, []int32{5, 6}},
		{"softmax", "Softmax", nil, []*tensor{floats([]int{1, 2}, 0, 0)}, []int{1, 2}, []float32{0.5, 0.5}, nil},
		{"batch matmul adj_y", "BatchMatMul", map[string]attr{"adj_y": {B: ptr(true)}}, []*tensor{floats([]int{1, 1, 2}, 1, 2), floats([]int{1, 2, 2}, 1, 0, 0, 1)}, []int{1, 1, 2}, []float32{1, 2}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := &node{name: tc.name, op: tc.op, attrs: tc.attrs, nOut: 1}
			outs, err := kernels[tc.op](nil, n, tc.in)
			if tc.shape == nil { // expected failure
				if err == nil {
					t.Fatalf("want an error, got %v", outs[0])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := outs[0]
			if !reflect.DeepEqual(got.shape, tc.shape) {
				t.Fatalf("shape %v, want %v", got.shape, tc.shape)
			}
			if tc.f != nil && !reflect.DeepEqual(got.f, tc.f) {
				t.Fatalf("values %v, want %v", got.f, tc.f)
			}
			if tc.i != nil && !reflect.DeepEqual(got.i, tc.i) {
				t.Fatalf("values %v, want %v", got.i, tc.i)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
