package use

import (
	"fmt"
	"math"
	"testing"

	"github.com/viterin/vek/vek32"

	"github.com/toolsmith/toolsmith/internal/cputime"
)

// TestDenseMatMul checks the packed kernel against a float64 product for
// shapes that exercise every edge: fewer than four rows, groups of six then
// of four rows, a partial group of rows, a partial last panel, a single
// column and a long inner dimension, and products large enough to be split
// across goroutines.
func TestDenseMatMul(t *testing.T) {
	if !hasSgemmAsm {
		t.Skip("no assembly kernel on this CPU")
	}
	for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 33} {
		for _, k := range []int{1, 7, 64, 513} {
			for _, n := range []int{1, 15, 16, 17, 40, 1536} {
				if n == 1536 && m < 9 {
					continue
				}
				t.Run(fmt.Sprintf("%dx%dx%d", m, k, n), func(t *testing.T) {
					a := make([]float32, m*k)
					w := make([]float32, k*n)
					for i := range a {
						a[i] = float32(math.Sin(float64(i)*0.37)) * 2
					}
					for i := range w {
						w[i] = float32(math.Cos(float64(i) * 0.11))
					}
					// Garbage in the output proves every element is written.
					out := make([]float32, m*n)
					for i := range out {
						out[i] = float32(math.NaN())
					}
					denseMatMul(out, a, m, packPanels(w, k, n))
					// The same bits as vek's kernel (the unpacked path):
					// both add the k products in order with FMA. (A
					// single column is a dot product for vek, summed in
					// another order; the model has none.)
					if n > 1 {
						ref := make([]float32, m*n)
						vek32.MatMul_Into(ref, a, w, k)
						for i := range ref {
							if ref[i] != out[i] {
								t.Fatalf("element %d: %v, vek %v", i, out[i], ref[i])
							}
						}
					}
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							var want, scale float64
							for p := 0; p < k; p++ {
								x := float64(a[i*k+p]) * float64(w[p*n+j])
								want += x
								scale += math.Abs(x)
							}
							if got := float64(out[i*n+j]); math.Abs(got-want) > 1e-6*max(1, scale) || math.IsNaN(got) {
								t.Fatalf("c[%d][%d] = %v, want %v", i, j, got, want)
							}
						}
					}
				})
			}
		}
	}
}

// TestPackWeights checks that the model's dense weights are held packed
// only, and that an embedding through them matches the unpacked kernel.
func TestPackWeights(t *testing.T) {
	if !hasSgemmAsm {
		t.Skip("no assembly kernel on this CPU")
	}
	m := loadModel(t)
	packed := 0
	for _, n := range m.g.nodes {
		if n.konst != nil && n.konst.packed != nil {
			packed++
			if n.konst.f != nil {
				t.Fatalf("%s is held twice", n.name)
			}
		}
	}
	if packed == 0 {
		t.Fatal("no weights were packed")
	}
	a := &tensor{dt: dtFloat, shape: []int{5, 3}, f: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}
	w := &tensor{dt: dtFloat, shape: []int{3, 2}, f: []float32{1, -1, 0.5, 2, -3, 0}}
	plain, err := dense(nil, a, w)
	if err != nil {
		t.Fatal(err)
	}
	w.packed = packPanels(w.f, 3, 2)
	fast, err := dense(nil, a, w)
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain.f {
		if plain.f[i] != fast.f[i] {
			t.Fatalf("element %d: packed %v, plain %v", i, fast.f[i], plain.f[i])
		}
	}
	if _, err := dense(nil, &tensor{dt: dtFloat, shape: []int{2, 4}, f: make([]float32, 8)}, w); err == nil {
		t.Fatal("a mismatched inner dimension was multiplied")
	}
}

// BenchmarkSgemmKernels multiplies 192 token rows by a 512x2048 packed
// weight matrix (a feed-forward layer of a 256-token pass) on one
// goroutine, four rows at a time (sgemm4x16) and six at a time
// (sgemm6x16), back to back in one binary. It reports GFLOP/s of
// wall-clock time and CPU ms per op (on a shared machine wall time also
// measures the scheduler).
func BenchmarkSgemmKernels(b *testing.B) {
	if !hasSgemmAsm {
		b.Skip("no assembly kernel on this CPU")
	}
	const m, k, n = 192, 512, 2048
	a := make([]float32, m*k)
	w := make([]float32, k*n)
	for i := range a {
		a[i] = float32(math.Sin(float64(i) * 0.37))
	}
	for i := range w {
		w[i] = float32(math.Cos(float64(i) * 0.11))
	}
	p := packPanels(w, k, n)
	out := make([]float32, m*n)
	for _, rows := range []int{4, 6} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			cpu0, _ := cputime.Process()
			for b.Loop() {
				for pi := 0; pi < n/panelWidth; pi++ {
					panel := &p.data[pi*k*panelWidth]
					for i := 0; i < m; i += rows {
						if rows == 6 {
							sgemm6x16(k, &a[i*k], k, panel, &out[i*n+pi*panelWidth], n)
						} else {
							sgemm4x16(k, &a[i*k], k, panel, &out[i*n+pi*panelWidth], n)
						}
					}
				}
			}
			cpu1, _ := cputime.Process()
			b.ReportMetric(2*m*k*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
