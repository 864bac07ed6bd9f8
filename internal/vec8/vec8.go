// Package vec8 is int8 vector arithmetic for exact top-k scans: a vector is
// quantised to int8 with an error bound (Quantize, Bound), a scan ranks on
// the int8 copies (Dot, AVX2 assembly on amd64, a quarter of the bytes of
// float32) and scores in float32 only the rows whose bound still reaches
// the top k. The SQLite store's vector index and the usage memory of past
// queries (retrieval) scan this way.
package vec8

import "math"

// Dot returns the dot product of two int8 vectors of equal length. On amd64
// with AVX2 the bulk runs in assembly (dot_amd64.s), 32 elements a step.
func Dot(a, b []int8) int32 {
	b = b[:len(a)]
	n := 0
	var s int32
	if HasAsm {
		n = len(a) &^ 31
		if n > 0 {
			s = dotAsm(a[:n], b[:n])
		}
	}
	for i := n; i < len(a); i++ {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}

// Quantize writes the int8 form of v into dst (len(dst) == len(v)): v ≈
// scale·dst, with scale = max|vᵢ|/127 and each component rounded to the
// nearest step. It returns scale, the length of the residual v − scale·dst
// and the length of scale·dst, which bound the error of a quantised dot
// product (see Bound).
func Quantize(dst []int8, v []float32) (scale, resid, norm float64) {
	maxAbs := 0.0
	for _, x := range v {
		maxAbs = math.Max(maxAbs, math.Abs(float64(x)))
	}
	if maxAbs == 0 || math.IsInf(maxAbs, 0) || math.IsNaN(maxAbs) {
		clear(dst)
		r := 0.0
		for _, x := range v {
			r += float64(x) * float64(x)
		}
		return 0, math.Sqrt(r), 0
	}
	scale = maxAbs / 127
	var r2, n2 float64
	for i, x := range v {
		q := math.Round(float64(x) / scale)
		q = math.Max(-127, math.Min(127, q))
		dst[i] = int8(q)
		d := float64(x) - q*scale
		r2 += d * d
		n2 += q * scale * q * scale
	}
	return scale, math.Sqrt(r2), math.Sqrt(n2)
}

// Bound bounds |q·v − sq·sv·(bq·bv)| for q ≈ sq·bq and v ≈ sv·bv, given
// each side's residual length and quantised length: writing q = Q + rq and
// v = V + rv, q·v − Q·V = Q·rv + rq·V + rq·rv, and Cauchy–Schwarz bounds
// each term.
func Bound(qResid, qNorm, vResid, vNorm float64) float64 {
	return qNorm*vResid + qResid*vNorm + qResid*vResid
}
