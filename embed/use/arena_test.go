package use

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// TestArenaRecyclesOnlyDeadBuffers: a buffer returns to the arena when the
// last tensor reading it is dropped (a reshape shares its input's buffer),
// pinned buffers (constants, fed inputs) never do, and a recycled buffer
// comes back zeroed.
func TestArenaRecyclesOnlyDeadBuffers(t *testing.T) {
	x := new(arena)
	refs := bufRefs{}
	a := x.newFloat([]int{3, 5})
	for k := range a.f {
		a.f[k] = float32(k + 1)
	}
	view := a.reshaped([]int{15})
	refs.add(a, 1)
	refs.add(view, 1)
	refs.drop(a, x)
	if x.held != 0 {
		t.Fatalf("recycled a buffer a reshape still reads (held %d)", x.held)
	}
	refs.drop(view, x)
	if x.held != 16 {
		t.Fatalf("held %d after the last reader was dropped, want 16", x.held)
	}
	b := x.floats(12) // same power-of-two class: the recycled buffer
	if &b[:1][0] != &a.f[:1][0] {
		t.Fatal("the recycled buffer was not reused")
	}
	for k, v := range b {
		if v != 0 {
			t.Fatalf("recycled buffer not zeroed at %d: %v", k, v)
		}
	}
	if len(b) != 12 || x.held != 0 {
		t.Fatalf("len %d held %d", len(b), x.held)
	}

	k := &tensor{dt: dtFloat, shape: []int{4}, f: make([]float32, 4)}
	refs.add(k, pinned)
	kv := k.reshaped([]int{2, 2})
	refs.add(kv, 1)
	refs.drop(kv, x)
	if x.held != 0 {
		t.Fatal("recycled a pinned (constant) buffer")
	}

	var none *arena // nil: fresh allocations, nothing kept
	none.put(none.floats(8))
	if got := len(none.floats(3)); got != 3 {
		t.Fatalf("nil arena gave %d floats", got)
	}
	x.put(make([]float32, 3)) // not a power-of-two capacity: not kept
	if x.held != 0 {
		t.Fatal("kept a buffer floats did not hand out")
	}
}

// TestArenaPassesAreExact: passes of the real model through one reused
// (dirty) arena give bit for bit the vectors of passes that allocate every
// tensor afresh, for batches of different shapes in turn.
func TestArenaPassesAreExact(t *testing.T) {
	m := loadModel(t)
	var texts []string
	for k := range 12 {
		texts = append(texts, fmt.Sprintf("%s (tool %d)", benchDocs[k%len(benchDocs)], k))
	}
	batches := [][]string{texts[:1], texts[:5], texts[3:12], texts[:2], texts}
	x := new(arena)
	for round := range 2 {
		for bi, batch := range batches {
			seqs := make([][]int, len(batch))
			for j, s := range batch {
				seqs[j] = m.tok.Encode(s)
			}
			fresh, err := m.g.run(feedsFor(seqs), nil)
			if err != nil {
				t.Fatal(err)
			}
			reused, err := m.g.run(feedsFor(seqs), x)
			if err != nil {
				t.Fatal(err)
			}
			if len(fresh.f) != len(reused.f) {
				t.Fatalf("round %d batch %d: %d vs %d values", round, bi, len(fresh.f), len(reused.f))
			}
			for j := range fresh.f {
				if fresh.f[j] != reused.f[j] {
					t.Fatalf("round %d batch %d: value %d differs: %v vs %v", round, bi, j, fresh.f[j], reused.f[j])
				}
			}
		}
	}
	if x.held == 0 {
		t.Fatal("the arena kept nothing to reuse")
	}
	docs, err := m.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for k, text := range texts {
		q, err := m.EmbedQuery(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		for j := range q {
			if q[j] != docs[k][j] {
				t.Fatalf("document %d differs from its query embedding at %d", k, j)
			}
		}
	}
}

// TestBinFastMatchesPlainLoops: the vectorised element-wise additions,
// subtractions and multiplications give the plain float32 loops' bits,
// including for infinities, NaNs, signed zeros and subnormals.
func TestBinFastMatchesPlainLoops(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -3e38, 3e38, 1, -1}
	for _, n := range []int{vecMin - 1, vecMin, 37, 100, 1027} {
		x := make([]float32, n)
		y := make([]float32, n)
		for k := range x {
			x[k] = float32(math.Sin(float64(k)*1.7)) * float32(k+1)
			y[k] = float32(math.Cos(float64(k)*0.3)) / float32(k+1)
			if k%7 == 0 {
				x[k] = special[k%len(special)]
			}
			if k%5 == 0 {
				y[k] = special[(k/5)%len(special)]
			}
		}
		for _, kind := range []binKind{binAdd, binSub, binMul} {
			got := make([]float32, n)
			binSlices(kind, got, x, y)
			gotS := make([]float32, n)
			binScalar(kind, gotS, x, y[3], false)
			for k := range x {
				var want, wantS float32
				switch kind {
				case binAdd:
					want, wantS = x[k]+y[k], x[k]+y[3]
				case binSub:
					want, wantS = x[k]-y[k], x[k]-y[3]
				case binMul:
					want, wantS = x[k]*y[k], x[k]*y[3]
				}
				if math.Float32bits(got[k]) != math.Float32bits(want) && !(want != want && got[k] != got[k]) {
					t.Fatalf("n %d kind %d: element %d = %v, want %v", n, kind, k, got[k], want)
				}
				if math.Float32bits(gotS[k]) != math.Float32bits(wantS) && !(wantS != wantS && gotS[k] != gotS[k]) {
					t.Fatalf("n %d kind %d scalar: element %d = %v, want %v", n, kind, k, gotS[k], wantS)
				}
			}
		}
	}
}
