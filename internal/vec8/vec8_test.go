package vec8

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	n := 0.0
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func normalize(v []float32) []float32 {
	n := 0.0
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// TestDot checks the assembly path against plain Go over lengths around its
// 32-element step and the full int8 range (where int16 products saturate if
// the wrong instruction is used).
func TestDot(t *testing.T) {
	t.Logf("assembly path available: %v", HasAsm)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 512, 513, 4096} {
		a, b := make([]int8, n), make([]int8, n)
		for trial := 0; trial < 20; trial++ {
			for i := range a {
				switch trial {
				case 0:
					a[i], b[i] = -128, -128
				case 1:
					a[i], b[i] = 127, -128
				default:
					a[i], b[i] = int8(r.IntN(256)-128), int8(r.IntN(256)-128)
				}
			}
			var want int32
			for i := range a {
				want += int32(a[i]) * int32(b[i])
			}
			if got := Dot(a, b); got != want {
				t.Fatalf("n=%d trial %d: Dot = %d, want %d", n, trial, got, want)
			}
		}
	}
}

// TestQuantizeBound checks that the error bound holds for the vectors the
// quantised scan finds hardest: spikes, near-zero and dense ones.
func TestQuantizeBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const dim = 96
	gen := []func() []float32{
		func() []float32 { return randUnit(r, dim) },
		func() []float32 { // one large component: the rest round coarsely
			v := randUnit(r, dim)
			v[r.IntN(dim)] = 40
			return normalize(v)
		},
		func() []float32 { return make([]float32, dim) },
		func() []float32 { // tiny magnitudes (not normalised)
			v := randUnit(r, dim)
			for i := range v {
				v[i] *= 1e-6
			}
			return v
		},
	}
	for trial := 0; trial < 2000; trial++ {
		q, v := gen[trial%len(gen)](), gen[(trial/len(gen))%len(gen)]()
		qb, vb := make([]int8, dim), make([]int8, dim)
		qs, qr, qn := Quantize(qb, q)
		vs, vr, vn := Quantize(vb, v)
		exact := 0.0
		for i := range q {
			exact += float64(q[i]) * float64(v[i])
		}
		approx := qs * vs * float64(Dot(qb, vb))
		if d := math.Abs(exact - approx); d > Bound(qr, qn, vr, vn)+1e-12 {
			t.Fatalf("trial %d: |exact−approx| = %g exceeds bound %g", trial, d, Bound(qr, qn, vr, vn))
		}
	}
}
