package graph_test

import (
	"math"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want []float32
	}{
		{[]float32{3, 4}, []float32{0.6, 0.8}},
		{[]float32{0, 0, 0}, []float32{0, 0, 0}},
		{[]float32{-2}, []float32{-1}},
		{nil, []float32{}},
	}
	for _, tc := range tests {
		got := graph.Normalize(tc.in)
		if len(got) != len(tc.want) {
			t.Fatalf("Normalize(%v) = %v", tc.in, got)
		}
		for i := range got {
			if math.Abs(float64(got[i]-tc.want[i])) > 1e-6 {
				t.Errorf("Normalize(%v) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
	in := []float32{1, 1}
	graph.Normalize(in)
	if in[0] != 1 {
		t.Error("Normalize modified its argument")
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{2, 0}, 1},
		{[]float32{1, 0}, []float32{0, 3}, 0},
		{[]float32{1, 1}, []float32{-1, -1}, -1},
		{[]float32{1, 0}, []float32{1, 1}, 1 / math.Sqrt2},
		{[]float32{0, 0}, []float32{1, 1}, 0},
		{[]float32{1}, []float32{1, 1}, 0},
	}
	for _, tc := range tests {
		if got := graph.Cosine(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
