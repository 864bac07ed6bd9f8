// Package adapter learns a small linear refinement of a frozen embedder's
// query vectors from a catalogue (and, when given, from use): a map
// y = x + Δx over the query side, trained contrastively so that a text that
// describes a tool (a use case, its summary, its verb, a parameter name, a
// past query it served) lands nearer that tool's vector than the other
// tools' (in-batch softmax, the other tools as negatives). Tool vectors are
// left as they are, so the store need not be re-embedded.
//
// The package is pure logic over vectors: no I/O, no clock, and training is
// deterministic for a seed.
package adapter

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sync"
)

// Pair is one training example: a text's frozen vector and the index of
// the tool (in the targets given to Train) it should retrieve.
type Pair struct {
	Query  []float32
	Target int
}

// Options tune Train; zero values take the defaults.
type Options struct {
	// Epochs over the pairs (default: 20, or fewer when the pairs are
	// many, so that training takes at most PairSteps pair visits; see
	// DefaultEpochs).
	Epochs int
	// Batch is the number of pairs per step (default 64).
	Batch int
	// Negatives is the number of tools each step scores against: the
	// batch's own targets, filled up with a seeded sample of the others
	// (default 256; every tool when there are fewer).
	Negatives int
	// LearningRate of Adam (default 1e-3).
	LearningRate float64
	// Temperature of the softmax over cosines (default 0.05).
	Temperature float64
	// Decay pulls Δ towards zero (the identity map) by this L2 weight per
	// step (default 0.1, chosen on a tool-disjoint split: weaker decay
	// fits the training tools and loses on the others), so what is not
	// learned stays as it was; < 0: none.
	Decay float64
	// Seed makes the shuffles and the negative samples reproducible.
	Seed int64
	// Workers share each step's work (default 2); every vector and row is
	// computed by one worker alone, so the adapter does not depend on it.
	Workers int
	// BothSides maps the tool vectors too (a shared map, a learned
	// metric), so a tool the adapter never saw moves with the queries;
	// else only queries are mapped.
	BothSides bool
}

// MaxEpochs is the default epoch count of a small training set (chosen on
// about 2,000 pairs); PairSteps bounds the default training's pair visits
// (epochs × pairs), so a large catalogue with much use trains in minutes
// on two cores: 10,000 tools and 100,000 events (about 150,000 pairs)
// train 2 epochs, some 4,700 steps of a batch of 64, which is seven times
// the steps of the small set's 20 epochs.
const (
	MaxEpochs = 20
	PairSteps = 300_000
)

// DefaultEpochs is the epoch count Train takes for n pairs when
// Options.Epochs is zero: MaxEpochs, or as many whole epochs as fit in
// PairSteps pair visits, at least one.
func DefaultEpochs(n int) int {
	if n <= 0 {
		return MaxEpochs
	}
	return min(MaxEpochs, max(1, PairSteps/n))
}

func (o Options) withDefaults(pairs int) Options {
	if o.Epochs <= 0 {
		o.Epochs = DefaultEpochs(pairs)
	}
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.Negatives <= 0 {
		o.Negatives = 256
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 1e-3
	}
	if o.Temperature <= 0 {
		o.Temperature = 0.05
	}
	if o.Decay < 0 {
		o.Decay = 0
	} else if o.Decay == 0 {
		o.Decay = 0.1
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}

// Adapter is the learned map y = x + Δx, normalised to unit length.
type Adapter struct {
	Dim   int
	Delta []float32 // Dim×Dim, row-major
	// Tools says the map applies to tool vectors too (ApplyTool).
	Tools bool
}

// ApplyTool maps a tool vector: Apply when the adapter was trained on both
// sides, else the vector unchanged.
func (a *Adapter) ApplyTool(x []float32) []float32 {
	if a == nil || !a.Tools {
		return x
	}
	return a.Apply(x)
}

// Identity is the adapter that changes nothing.
func Identity(dim int) *Adapter {
	return &Adapter{Dim: dim, Delta: make([]float32, dim*dim)}
}

// Apply maps a query vector; it returns a new unit vector (x itself when
// the dimension does not match, or when x is zero).
func (a *Adapter) Apply(x []float32) []float32 {
	if a == nil || len(x) != a.Dim {
		return x
	}
	y := make([]float32, a.Dim)
	a.forward(x, y)
	if normalise(y) == 0 {
		return x
	}
	return y
}

// forward writes x + Δx into y.
func (a *Adapter) forward(x, y []float32) {
	d := a.Dim
	for r := 0; r < d; r++ {
		row := a.Delta[r*d : (r+1)*d]
		var s float32
		for c, v := range x {
			s += row[c] * v
		}
		y[r] = x[r] + s
	}
}

// Stats describe a training run.
type Stats struct {
	Pairs, Targets, Steps, Epochs int
	// FirstLoss and LastLoss are the mean softmax loss of the first and
	// the last epoch.
	FirstLoss, LastLoss float64
}

// Train learns an adapter that ranks each pair's target first among the
// targets. Targets need not be unit vectors (they are normalised here).
func Train(pairs []Pair, targets [][]float32, o Options) (*Adapter, Stats, error) {
	o = o.withDefaults(len(pairs))
	if len(pairs) == 0 || len(targets) < 2 {
		return nil, Stats{}, errors.New("adapter: need at least one pair and two targets")
	}
	d := len(targets[0])
	if d == 0 {
		return nil, Stats{}, errors.New("adapter: empty target vectors")
	}
	T := make([][]float32, len(targets))
	for i, t := range targets {
		if len(t) != d {
			return nil, Stats{}, fmt.Errorf("adapter: target %d has dimension %d, want %d", i, len(t), d)
		}
		T[i] = append([]float32(nil), t...)
		normalise(T[i])
	}
	for i, p := range pairs {
		if len(p.Query) != d {
			return nil, Stats{}, fmt.Errorf("adapter: pair %d has dimension %d, want %d", i, len(p.Query), d)
		}
		if p.Target < 0 || p.Target >= len(T) {
			return nil, Stats{}, fmt.Errorf("adapter: pair %d targets %d of %d", i, p.Target, len(T))
		}
	}
	a := Identity(d)
	a.Tools = o.BothSides
	rng := rand.New(rand.NewSource(o.Seed))
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	tr := &trainer{a: a, o: o, m: make([]float64, d*d), v: make([]float64, d*d)}
	st := Stats{Pairs: len(pairs), Targets: len(T), Epochs: o.Epochs}
	for ep := 0; ep < o.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var epochLoss float64
		for b := 0; b < len(order); b += o.Batch {
			batch := order[b:min(b+o.Batch, len(order))]
			cands := candidates(pairs, batch, len(T), o.Negatives, rng)
			xs := make([][]float32, len(batch))
			pos := make([]int, len(batch))
			at := map[int]int{}
			for j, t := range cands {
				at[t] = j
			}
			for i, k := range batch {
				xs[i], pos[i] = pairs[k].Query, at[pairs[k].Target]
			}
			ts := make([][]float32, len(cands))
			for j, t := range cands {
				ts[j] = T[t]
			}
			st.Steps++
			epochLoss += tr.step(xs, pos, ts, st.Steps)
		}
		epochLoss /= float64(len(order))
		if ep == 0 {
			st.FirstLoss = epochLoss
		}
		st.LastLoss = epochLoss
	}
	return a, st, nil
}

// trainer holds Adam's moments between steps.
type trainer struct {
	a    *Adapter
	o    Options
	m, v []float64
}

// parallel runs f over [0, n) in o.Workers contiguous ranges. Every index
// is computed alone, so the result does not depend on the worker count.
func (tr *trainer) parallel(n int, f func(lo, hi int)) {
	w := min(tr.o.Workers, n)
	if w <= 1 {
		f(0, n)
		return
	}
	per := (n + w - 1) / w
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+per, n))
	}
	wg.Wait()
}

// mapAll returns the unit vectors of x + Δx for each x, and their norms
// before normalising.
func (tr *trainer) mapAll(xs [][]float32) ([][]float32, []float32) {
	d := tr.a.Dim
	zs := make([][]float32, len(xs))
	ns := make([]float32, len(xs))
	tr.parallel(len(xs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			zs[i] = make([]float32, d)
			tr.a.forward(xs[i], zs[i])
			ns[i] = normalise(zs[i])
		}
	})
	return zs, ns
}

// step takes one Adam step on the softmax loss of queries xs (query i's
// right tool is ts[pos[i]]) and returns the summed loss.
func (tr *trainer) step(xs [][]float32, pos []int, ts [][]float32, n int) float64 {
	a, o, d := tr.a, tr.o, tr.a.Dim
	zs, nz := tr.mapAll(xs)
	us, nu := ts, []float32(nil)
	if a.Tools {
		us, nu = tr.mapAll(ts)
	}
	// R = (softmax − onehot) / temperature, B×C
	R := make([][]float64, len(xs))
	var loss float64
	for i, z := range zs {
		row := make([]float64, len(us))
		mx := math.Inf(-1)
		for j, u := range us {
			var s float32
			for k, zk := range z {
				s += zk * u[k]
			}
			row[j] = float64(s) / o.Temperature
			mx = math.Max(mx, row[j])
		}
		var sum float64
		for j := range row {
			row[j] = math.Exp(row[j] - mx)
			sum += row[j]
		}
		loss -= math.Log(row[pos[i]] / sum)
		for j := range row {
			row[j] /= sum
		}
		row[pos[i]]--
		for j := range row {
			row[j] /= o.Temperature
		}
		R[i] = row
	}
	// the gradients at the unnormalised vectors: (g − (g·z) z) / |y|
	back := func(g []float64, z []float32, n float32) []float32 {
		var dot float64
		for k, zk := range z {
			dot += g[k] * float64(zk)
		}
		out := make([]float32, len(z))
		for k, zk := range z {
			out[k] = float32((g[k] - dot*float64(zk)) / float64(n))
		}
		return out
	}
	gy := make([][]float32, len(xs))
	for i := range xs {
		g := make([]float64, d)
		for j, u := range us {
			if r := R[i][j]; r != 0 {
				for k, uk := range u {
					g[k] += r * float64(uk)
				}
			}
		}
		gy[i] = back(g, zs[i], nz[i])
	}
	var gv [][]float32
	if a.Tools {
		gv = make([][]float32, len(ts))
		for j := range ts {
			g := make([]float64, d)
			for i, z := range zs {
				if r := R[i][j]; r != 0 {
					for k, zk := range z {
						g[k] += r * float64(zk)
					}
				}
			}
			gv[j] = back(g, us[j], nu[j])
		}
	}
	// dL/dΔ = Σ gy xᵀ (+ Σ gv tᵀ), row by row, then Adam on that row.
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	c1 := 1 - math.Pow(beta1, float64(n))
	c2 := 1 - math.Pow(beta2, float64(n))
	scale := 1 / float64(len(xs))
	tr.parallel(d, func(lo, hi int) {
		grow := make([]float64, d)
		for r := lo; r < hi; r++ {
			clear(grow)
			for i, x := range xs {
				if g := float64(gy[i][r]); g != 0 {
					for c, xc := range x {
						grow[c] += g * float64(xc)
					}
				}
			}
			for j, t := range ts {
				if gv == nil {
					break
				}
				if g := float64(gv[j][r]); g != 0 {
					for c, tc := range t {
						grow[c] += g * float64(tc)
					}
				}
			}
			for c := 0; c < d; c++ {
				k := r*d + c
				g := grow[c]*scale + o.Decay*float64(a.Delta[k])
				tr.m[k] = beta1*tr.m[k] + (1-beta1)*g
				tr.v[k] = beta2*tr.v[k] + (1-beta2)*g*g
				a.Delta[k] -= float32(o.LearningRate * (tr.m[k] / c1) / (math.Sqrt(tr.v[k]/c2) + eps))
			}
		}
	})
	return loss
}

// candidates are the tools a step scores against: every tool when there
// are at most n, else the batch's targets and a seeded sample of the
// others up to n.
func candidates(pairs []Pair, batch []int, nT, n int, rng *rand.Rand) []int {
	if nT <= n {
		out := make([]int, nT)
		for i := range out {
			out[i] = i
		}
		return out
	}
	in := map[int]bool{}
	var out []int
	for _, i := range batch {
		if t := pairs[i].Target; !in[t] {
			in[t] = true
			out = append(out, t)
		}
	}
	for len(out) < n {
		if t := rng.Intn(nT); !in[t] {
			in[t] = true
			out = append(out, t)
		}
	}
	return out
}

// normalise scales v to unit length in place and returns its former norm.
func normalise(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := float32(math.Sqrt(s))
	if n == 0 {
		return 0
	}
	for i := range v {
		v[i] /= n
	}
	return n
}
