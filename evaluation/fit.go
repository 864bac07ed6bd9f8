package evaluation

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/toolsmith/toolsmith/retrieval"
)

// decisionSample is one search of a leave-one-out query as the decision
// model sees it: its candidates and whether the first is right.
type decisionSample struct {
	Candidates []retrieval.Candidate `json:"c"`
	Right      bool                  `json:"right"`
}

// fitDecision appends samples (each query's search with its relevant tools
// present, labelled by whether the first candidate is one of them, and its
// search with them taken out, never right) to path, and fits the decision
// model on every sample in the file.
func fitDecision(path string, samples []looSample) (retrieval.DecisionModel, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o644)
	if err != nil {
		return retrieval.DecisionModel{}, fmt.Errorf("evaluation: decision samples: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, s := range samples {
		for _, d := range []decisionSample{{s.present, s.presentRight}, {s.absent, false}} {
			if err := enc.Encode(d); err != nil {
				return retrieval.DecisionModel{}, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return retrieval.DecisionModel{}, fmt.Errorf("evaluation: decision samples: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return retrieval.DecisionModel{}, err
	}
	var all []decisionSample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d decisionSample
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return retrieval.DecisionModel{}, fmt.Errorf("evaluation: decision samples %s: %w", path, err)
		}
		all = append(all, d)
	}
	if err := sc.Err(); err != nil {
		return retrieval.DecisionModel{}, err
	}
	return fitLogistic(all), nil
}

// fitLogistic fits a logistic regression by Newton's method with a small
// ridge penalty (λ = 1e-3 per sample, the bias unpenalised), which keeps
// the fit finite when a feature separates the classes.
func fitLogistic(data []decisionSample) retrieval.DecisionModel {
	const d = fitDim // bias first
	lambda := 1e-3 * float64(len(data))
	var beta [d]float64
	x := func(s decisionSample) [d]float64 {
		var v [d]float64
		v[0] = 1
		f := retrieval.Features(s.Candidates)
		copy(v[1:], f[:])
		return v
	}
	for iter := 0; iter < 50; iter++ {
		var grad [d]float64
		var hess [d][d]float64
		for _, s := range data {
			v := x(s)
			z := 0.0
			for i := range v {
				z += beta[i] * v[i]
			}
			p := 1 / (1 + math.Exp(-z))
			y := 0.0
			if s.Right {
				y = 1
			}
			for i := range v {
				grad[i] += (y - p) * v[i]
				for j := range v {
					hess[i][j] += p * (1 - p) * v[i] * v[j]
				}
			}
		}
		for i := 1; i < d; i++ {
			grad[i] -= lambda * beta[i]
			hess[i][i] += lambda
		}
		step := solve(hess, grad)
		change := 0.0
		for i := range beta {
			beta[i] += step[i]
			change = max(change, math.Abs(step[i]))
		}
		if change < 1e-9 {
			break
		}
	}
	m := retrieval.DecisionModel{Bias: round6(beta[0])}
	for i := range m.Weights {
		m.Weights[i] = round6(beta[i+1])
	}
	return m
}

// solve solves a·x = b by Gaussian elimination with partial pivoting (a is
// the positive-definite Hessian of a penalised fit, so it is regular).
func solve(a [fitDim][fitDim]float64, b [fitDim]float64) [fitDim]float64 {
	for c := 0; c < fitDim; c++ {
		p := c
		for r := c + 1; r < fitDim; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < fitDim; r++ {
			k := a[r][c] / a[c][c]
			for j := c; j < fitDim; j++ {
				a[r][j] -= k * a[c][j]
			}
			b[r] -= k * b[c]
		}
	}
	var x [fitDim]float64
	for r := fitDim - 1; r >= 0; r-- {
		s := b[r]
		for j := r + 1; j < fitDim; j++ {
			s -= a[r][j] * x[j]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// fitDim is the fit's dimension: the bias and the features.
const fitDim = retrieval.DecisionFeatures + 1

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
