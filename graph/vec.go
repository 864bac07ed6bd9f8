package graph

import "math"

// Normalize returns a unit-length copy of v. A zero or empty vector is
// returned as a zero vector of the same length (its cosine with anything is 0).
func Normalize(v []float32) []float32 {
	return NormalizeInPlace(append(make([]float32, 0, len(v)), v...))
}

// NormalizeInPlace scales v to unit length as Normalize does (a zero
// vector stays zero), without a copy, and returns it.
func NormalizeInPlace(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return v
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return v
}

// Cosine returns the cosine similarity of a and b, accumulated in float64.
// It returns 0 when the lengths differ or either vector is zero.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}
