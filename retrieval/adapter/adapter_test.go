package adapter

import (
	"math"
	"math/rand"
	"slices"
	"testing"
)

// synthetic builds a problem whose right map is known: tools are random
// unit vectors, and a text about tool t is t's vector seen through a fixed
// rotation-like mix M (plus noise), so the adapter must learn M⁻¹. Pairs
// 0..n-1 train; held are fresh texts of the same tools, never trained on.
func synthetic(dim, tools, perTool int, seed int64) (pairs, held []Pair, targets [][]float32) {
	rng := rand.New(rand.NewSource(seed))
	targets = make([][]float32, tools)
	for i := range targets {
		targets[i] = randUnit(rng, dim)
	}
	// M swaps pairs of coordinates and mixes them with a third: a strong,
	// linear distortion the identity map gets wrong.
	mix := func(v []float32) []float32 {
		out := make([]float32, dim)
		for k := range v {
			out[k] = 0.3*v[k] + 0.9*v[(k+1)%dim] - 0.3*v[(k+2)%dim]
		}
		return out
	}
	text := func(t int) []float32 {
		v := mix(targets[t])
		for k := range v {
			v[k] += float32(rng.NormFloat64() * 0.05)
		}
		normalise(v)
		return v
	}
	for t := range targets {
		for j := 0; j < perTool; j++ {
			pairs = append(pairs, Pair{Query: text(t), Target: t})
		}
		held = append(held, Pair{Query: text(t), Target: t})
	}
	return pairs, held, targets
}

func randUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for k := range v {
		v[k] = float32(rng.NormFloat64())
	}
	normalise(v)
	return v
}

// rankOf is the 0-based rank of p's target among targets by cosine with
// the adapted query.
func rankOf(a *Adapter, p Pair, targets [][]float32) int {
	q := a.Apply(p.Query)
	cos := func(t []float32) float64 {
		var s float64
		for k := range q {
			s += float64(q[k]) * float64(t[k])
		}
		return s
	}
	want := cos(targets[p.Target])
	r := 0
	for i, t := range targets {
		if i != p.Target && cos(t) > want {
			r++
		}
	}
	return r
}

func meanRank(a *Adapter, ps []Pair, targets [][]float32) float64 {
	var s float64
	for _, p := range ps {
		s += float64(rankOf(a, p, targets))
	}
	return s / float64(len(ps))
}

func TestTrainLearnsAKnownMap(t *testing.T) {
	pairs, held, targets := synthetic(16, 40, 4, 1)
	a, st, err := Train(pairs, targets, Options{Epochs: 60, Batch: 16, LearningRate: 0.01, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !(st.LastLoss < st.FirstLoss*0.5) {
		t.Fatalf("loss did not fall by half: %.3f → %.3f", st.FirstLoss, st.LastLoss)
	}
	before, after := meanRank(Identity(16), held, targets), meanRank(a, held, targets)
	if !(after < before/2) {
		t.Fatalf("held-out texts' mean rank: identity %.2f, adapter %.2f; want the adapter to halve it", before, after)
	}
	if st.Pairs != len(pairs) || st.Targets != len(targets) || st.Steps == 0 {
		t.Fatalf("stats = %+v", st)
	}
}

// With nothing to correct (texts already at their tools), the decay keeps
// the adapter near the identity: it does not make a right ranking worse.
func TestTrainKeepsWhatIsRight(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	dim, n := 16, 30
	var targets [][]float32
	var pairs []Pair
	for i := 0; i < n; i++ {
		targets = append(targets, randUnit(rng, dim))
	}
	for i, tv := range targets {
		q := slices.Clone(tv)
		for k := range q {
			q[k] += float32(rng.NormFloat64() * 0.05)
		}
		normalise(q)
		pairs = append(pairs, Pair{Query: q, Target: i})
	}
	a, _, err := Train(pairs, targets, Options{Epochs: 30, Batch: 8, LearningRate: 0.01, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := meanRank(a, pairs, targets); r != 0 {
		t.Fatalf("mean rank %.2f after training on already-right pairs; want 0", r)
	}
}

func TestTrainIsDeterministic(t *testing.T) {
	pairs, _, targets := synthetic(12, 20, 3, 2)
	o := Options{Epochs: 5, Batch: 8, Seed: 42, Negatives: 8} // sampled negatives too
	a1, _, err := Train(pairs, targets, o)
	if err != nil {
		t.Fatal(err)
	}
	a2, _, _ := Train(pairs, targets, o)
	if !slices.Equal(a1.Delta, a2.Delta) {
		t.Fatal("two runs with one seed differ")
	}
	o.Workers = 3 // every vector and gradient row is one worker's: same result
	a4, _, _ := Train(pairs, targets, o)
	if !slices.Equal(a1.Delta, a4.Delta) {
		t.Fatal("three workers gave another adapter than two")
	}
	o.Workers, o.Seed = 2, 43
	a3, _, _ := Train(pairs, targets, o)
	if slices.Equal(a1.Delta, a3.Delta) {
		t.Fatal("another seed gave the same adapter")
	}
}

func TestTrainChecksDimensions(t *testing.T) {
	targets := [][]float32{{1, 0, 0}, {0, 1, 0}}
	cases := map[string]struct {
		pairs   []Pair
		targets [][]float32
	}{
		"short query":    {[]Pair{{Query: []float32{1, 0}, Target: 0}}, targets},
		"target range":   {[]Pair{{Query: []float32{1, 0, 0}, Target: 2}}, targets},
		"ragged targets": {[]Pair{{Query: []float32{1, 0, 0}, Target: 0}}, [][]float32{{1, 0, 0}, {0, 1}}},
		"no pairs":       {nil, targets},
		"one target":     {[]Pair{{Query: []float32{1, 0, 0}, Target: 0}}, targets[:1]},
	}
	for name, c := range cases {
		if _, _, err := Train(c.pairs, c.targets, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestApply(t *testing.T) {
	x := []float32{3, 4}
	if got := Identity(2).Apply(x); math.Abs(float64(got[0])-0.6) > 1e-6 || math.Abs(float64(got[1])-0.8) > 1e-6 {
		t.Fatalf("identity.Apply(%v) = %v; want the unit vector", x, got)
	}
	if got := Identity(3).Apply(x); !slices.Equal(got, x) {
		t.Fatalf("a vector of another dimension must pass unchanged; got %v", got)
	}
	// y = x + Δx with Δ = [[-1, 0], [1, 0]] maps (1, 0) to (0, 1).
	a := &Adapter{Dim: 2, Delta: []float32{-1, 0, 1, 0}}
	got := a.Apply([]float32{1, 0})
	if math.Abs(float64(got[0])) > 1e-6 || math.Abs(float64(got[1])-1) > 1e-6 {
		t.Fatalf("Apply = %v; want (0, 1)", got)
	}
}

func BenchmarkTrain(b *testing.B) { benchmarkTrain(b, false) }

// BenchmarkTrainBothSides maps the step's tool vectors too.
func BenchmarkTrainBothSides(b *testing.B) { benchmarkTrain(b, true) }

func TestDefaultEpochs(t *testing.T) {
	for _, c := range []struct{ pairs, want int }{
		{0, MaxEpochs}, {1, MaxEpochs}, {2_000, MaxEpochs}, {PairSteps / MaxEpochs, MaxEpochs},
		{PairSteps/MaxEpochs + 1, MaxEpochs - 1}, {150_000, 2}, {PairSteps, 1}, {10 * PairSteps, 1},
	} {
		if got := DefaultEpochs(c.pairs); got != c.want {
			t.Errorf("DefaultEpochs(%d) = %d, want %d", c.pairs, got, c.want)
		}
	}
	// Train takes them: 3 pairs train MaxEpochs epochs unless told otherwise.
	rng := rand.New(rand.NewSource(1))
	targets := [][]float32{randUnit(rng, 8), randUnit(rng, 8)}
	pairs := []Pair{{Query: randUnit(rng, 8), Target: 0}, {Query: randUnit(rng, 8), Target: 1}, {Query: randUnit(rng, 8), Target: 0}}
	for _, c := range []struct{ epochs, want int }{{0, MaxEpochs}, {3, 3}} {
		_, st, err := Train(pairs, targets, Options{Epochs: c.epochs, Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		if st.Epochs != c.want || st.Steps != 2*c.want {
			t.Errorf("Epochs %d: trained %d epochs in %d steps, want %d in %d", c.epochs, st.Epochs, st.Steps, c.want, 2*c.want)
		}
	}
}

// BenchmarkTrainDeployment trains with the default options on what a
// large deployment's retraining reads: 10,000 tools with five catalogue
// texts each and 100,000 usage events (150,000 pairs); b.N trainings.
func BenchmarkTrainDeployment(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	const dim, tools, per, events = 512, 10000, 5, 100000
	targets := make([][]float32, tools)
	for i := range targets {
		targets[i] = randUnit(rng, dim)
	}
	pairs := make([]Pair, 0, tools*per+events)
	for t := range targets {
		for j := 0; j < per; j++ {
			pairs = append(pairs, Pair{Query: randUnit(rng, dim), Target: t})
		}
	}
	for j := 0; j < events; j++ {
		pairs = append(pairs, Pair{Query: randUnit(rng, dim), Target: rng.Intn(tools)})
	}
	b.ResetTimer()
	var st Stats
	for i := 0; i < b.N; i++ {
		var err error
		if _, st, err = Train(pairs, targets, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Epochs), "epochs")
	b.ReportMetric(float64(len(pairs)), "pairs")
}

func benchmarkTrain(b *testing.B, both bool) {
	// One epoch at the catalogue scale the issue names: 10,000 tools with
	// five texts each (50,000 pairs) at 512 dimensions; b.N epochs.
	rng := rand.New(rand.NewSource(1))
	const dim, tools, per = 512, 10000, 5
	targets := make([][]float32, tools)
	for i := range targets {
		targets[i] = randUnit(rng, dim)
	}
	pairs := make([]Pair, 0, tools*per)
	for t := range targets {
		for j := 0; j < per; j++ {
			pairs = append(pairs, Pair{Query: randUnit(rng, dim), Target: t})
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Train(pairs, targets, Options{Epochs: 1, Seed: 1, BothSides: both}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(pairs)), "pairs/epoch")
}
