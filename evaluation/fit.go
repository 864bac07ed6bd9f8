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
// model on every sample in the file, and the record's weight over the
// default model (fitRecordWeight).
func fitDecision(path string, samples []looSample) (retrieval.DecisionModel, float64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o644)
	if err != nil {
		return retrieval.DecisionModel{}, 0, fmt.Errorf("evaluation: decision samples: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, s := range samples {
		for _, d := range []decisionSample{{s.present, s.presentRight}, {s.absent, false}} {
			if err := enc.Encode(d); err != nil {
				return retrieval.DecisionModel{}, 0, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return retrieval.DecisionModel{}, 0, fmt.Errorf("evaluation: decision samples: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return retrieval.DecisionModel{}, 0, err
	}
	var all []decisionSample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d decisionSample
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return retrieval.DecisionModel{}, 0, fmt.Errorf("evaluation: decision samples %s: %w", path, err)
		}
		all = append(all, d)
	}
	if err := sc.Err(); err != nil {
		return retrieval.DecisionModel{}, 0, err
	}
	return fitLogistic(all), fitRecordWeight(all, retrieval.DefaultDecisionModel), nil
}

// fitRecordWeight fits the weight of the record (the evidence part's last
// feature) with every other weight of base held: a one-feature logistic
// regression over the samples the evidence part reads, with base's
// log-odds (without EvidenceShift, which is chosen after the fit) as the
// offset. A search whose first has no record reads 0 for the feature, so
// base's confidence for it is left exactly as it was.
func fitRecordWeight(data []decisionSample, base retrieval.DecisionModel) float64 {
	const last = retrieval.DecisionEvidenceFeatures - 2 // then "has a record", chosen after the fit
	var off, x []float64
	var y []bool
	for _, s := range data {
		if !retrieval.HasEvidence(s.Candidates) {
			continue
		}
		f := retrieval.EvidenceFeatures(s.Candidates)
		z := base.EvidenceBias
		for i, w := range base.EvidenceWeights {
			if i != last {
				z += w * f[i]
			}
		}
		off, x, y = append(off, z), append(x, f[last]), append(y, s.Right)
	}
	w := 0.0
	if len(x) == 0 {
		return w
	}
	lambda := 1e-3 * float64(len(x))
	for iter := 0; iter < 50; iter++ {
		g, h := -lambda*w, lambda
		for k := range x {
			p := 1 / (1 + math.Exp(-(off[k] + w*x[k])))
			t := 0.0
			if y[k] {
				t = 1
			}
			g += (t - p) * x[k]
			h += p * (1 - p) * x[k] * x[k]
		}
		step := g / h
		w += step
		if math.Abs(step) < 1e-9 {
			break
		}
	}
	return round6(w)
}

// fitLogistic fits the decision model's two parts, each a logistic
// regression: the samples none of whose candidates carries usage evidence
// fit Bias and Weights over retrieval.Features, the others EvidenceBias
// and EvidenceWeights over retrieval.EvidenceFeatures (with no such
// samples that part stays empty, and the model reads every search with the
// first). EvidenceShift is left 0: it is chosen on the runs, not fitted.
func fitLogistic(data []decisionSample) retrieval.DecisionModel {
	var zx, ex [][]float64
	var zy, ey []bool
	for _, s := range data {
		if retrieval.HasEvidence(s.Candidates) {
			f := retrieval.EvidenceFeatures(s.Candidates)
			ex, ey = append(ex, f[:]), append(ey, s.Right)
		} else {
			f := retrieval.Features(s.Candidates)
			zx, zy = append(zx, f[:]), append(zy, s.Right)
		}
	}
	var m retrieval.DecisionModel
	if len(zx) > 0 {
		b := logistic(zx, zy)
		m.Bias = round6(b[0])
		for i := range m.Weights {
			m.Weights[i] = round6(b[i+1])
		}
	}
	if len(ex) > 0 {
		b := logistic(ex, ey)
		m.EvidenceBias = round6(b[0])
		for i := range m.EvidenceWeights {
			m.EvidenceWeights[i] = round6(b[i+1])
		}
	}
	return m
}

// logistic fits a logistic regression of y on x by Newton's method with a
// small ridge penalty (λ = 1e-3 per sample, the bias unpenalised), which
// keeps the fit finite when a feature separates the classes. It returns
// the bias, then a weight per feature.
func logistic(x [][]float64, y []bool) []float64 {
	d := len(x[0]) + 1 // bias first
	lambda := 1e-3 * float64(len(x))
	beta := make([]float64, d)
	v := make([]float64, d)
	for iter := 0; iter < 50; iter++ {
		grad := make([]float64, d)
		hess := make([][]float64, d)
		for i := range hess {
			hess[i] = make([]float64, d)
		}
		for k, row := range x {
			v[0] = 1
			copy(v[1:], row)
			z := 0.0
			for i := range v {
				z += beta[i] * v[i]
			}
			p := 1 / (1 + math.Exp(-z))
			t := 0.0
			if y[k] {
				t = 1
			}
			for i := range v {
				grad[i] += (t - p) * v[i]
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
	return beta
}

// solve solves a·x = b by Gaussian elimination with partial pivoting (a is
// the positive-definite Hessian of a penalised fit, so it is regular); it
// overwrites a and b.
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			k := a[r][c] / a[c][c]
			for j := c; j < n; j++ {
				a[r][j] -= k * a[c][j]
			}
			b[r] -= k * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for j := r + 1; j < n; j++ {
			s -= a[r][j] * x[j]
		}
		x[r] = s / a[r][r]
	}
	return x
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
