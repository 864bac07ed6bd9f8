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
	// Epochs over the pairs (default 20).
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
	// step (default 1e-4), so what is not learned stays as it was.
	Decay float64
	// Seed makes the shuffles and the negative samples reproducible.
	Seed int64
	// Workers split each batch's gradient (default 2); the parts are
	// summed in a fixed order, so a seed and a worker count give the same
	// adapter every time.
	Workers int
}

func (o Options) withDefaults() Options {
	if o.Epochs <= 0 {
		o.Epochs = 20
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
		o.Decay = 1e-4
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
	Pairs, Targets, Steps int
	// FirstLoss and LastLoss are the mean softmax loss of the first and
	// the last epoch.
	FirstLoss, LastLoss float64
}

// Train learns an adapter that ranks each pair's target first among the
// targets. Targets need not be unit vectors (they are normalised here).
func Train(pairs []Pair, targets [][]float32, o Options) (*Adapter, Stats, error) {
	o = o.withDefaults()
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
	rng := rand.New(rand.NewSource(o.Seed))
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	m := make([]float64, d*d) // Adam moments
	v := make([]float64, d*d)
	grads := make([][]float32, o.Workers)
	for w := range grads {
		grads[w] = make([]float32, d*d)
	}
	losses := make([]float64, o.Workers)
	st := Stats{Pairs: len(pairs), Targets: len(T)}
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	for ep := 0; ep < o.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var epochLoss float64
		for b := 0; b < len(order); b += o.Batch {
			batch := order[b:min(b+o.Batch, len(order))]
			cands := candidates(pairs, batch, len(T), o.Negatives, rng)
			// Each worker takes a fixed slice of the batch into its own
			// gradient; the gradients are then summed in worker order.
			var wg sync.WaitGroup
			per := (len(batch) + o.Workers - 1) / o.Workers
			for w := 0; w < o.Workers; w++ {
				lo, hi := min(w*per, len(batch)), min((w+1)*per, len(batch))
				wg.Add(1)
				go func(w int, part []int) {
					defer wg.Done()
					losses[w] = a.gradient(pairs, part, T, cands, o.Temperature, grads[w])
				}(w, batch[lo:hi])
			}
			wg.Wait()
			st.Steps++
			scale := 1 / float64(len(batch))
			c1 := 1 - math.Pow(beta1, float64(st.Steps))
			c2 := 1 - math.Pow(beta2, float64(st.Steps))
			for w := range grads {
				epochLoss += losses[w]
			}
			for k := range a.Delta {
				var g float64
				for w := range grads {
					g += float64(grads[w][k])
				}
				g = g*scale + o.Decay*float64(a.Delta[k])
				m[k] = beta1*m[k] + (1-beta1)*g
				v[k] = beta2*v[k] + (1-beta2)*g*g
				a.Delta[k] -= float32(o.LearningRate * (m[k] / c1) / (math.Sqrt(v[k]/c2) + eps))
			}
		}
		epochLoss /= float64(len(order))
		if ep == 0 {
			st.FirstLoss = epochLoss
		}
		st.LastLoss = epochLoss
	}
	return a, st, nil
}

// candidates are the tools a step scores against: the batch's targets
// first, then a seeded sample of the others up to n.
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

// gradient writes into g the gradient of the summed softmax loss of the
// pairs in part with respect to Δ, and returns that summed loss.
func (a *Adapter) gradient(pairs []Pair, part []int, T [][]float32, cands []int, temp float64, g []float32) float64 {
	clear(g)
	d := a.Dim
	y := make([]float32, d)
	gz := make([]float64, d)
	gy := make([]float32, d)
	logits := make([]float64, len(cands))
	var loss float64
	for _, i := range part {
		x := pairs[i].Query
		a.forward(x, y)
		n := normalise(y) // y is now z, the unit vector
		if n == 0 {
			continue
		}
		mx := math.Inf(-1)
		pos := -1
		for j, t := range cands {
			var s float32
			for k, zk := range y {
				s += zk * T[t][k]
			}
			logits[j] = float64(s) / temp
			mx = math.Max(mx, logits[j])
			if t == pairs[i].Target {
				pos = j
			}
		}
		var sum float64
		for j := range logits {
			logits[j] = math.Exp(logits[j] - mx)
			sum += logits[j]
		}
		loss += -math.Log(logits[pos] / sum)
		// dL/dz = Σ_j (p_j − 1[j = pos]) T_j / temp
		clear(gz)
		for j, t := range cands {
			p := logits[j] / sum
			if j == pos {
				p--
			}
			if p == 0 {
				continue
			}
			f := p / temp
			for k, tk := range T[t] {
				gz[k] += f * float64(tk)
			}
		}
		// through the normalisation: dL/dy = (gz − (gz·z) z) / |y|
		var dot float64
		for k, zk := range y {
			dot += gz[k] * float64(zk)
		}
		for k, zk := range y {
			gy[k] = float32((gz[k] - dot*float64(zk)) / float64(n))
		}
		// dL/dΔ = gy xᵀ
		for r, gr := range gy {
			if gr == 0 {
				continue
			}
			row := g[r*d : (r+1)*d]
			for c, xc := range x {
				row[c] += gr * xc
			}
		}
	}
	return loss
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
