package evaluation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/retrieval"
)

// Protocols of Run.
const (
	// ProtocolRank ranks every query and scores the ranking (the default).
	ProtocolRank = "rank"
	// ProtocolLeaveOneOut measures the fulfilment decision: for each query
	// it searches as a novel verb's workflow does (hybrid, the workflow's
	// candidate count), once with the catalogue whole and once with the
	// query's relevant tools taken out, and applies the substitution rule.
	ProtocolLeaveOneOut = "leave-one-out"
)

// LeaveOneOut is the decision's figures under one rule.
type LeaveOneOut struct {
	Rule retrieval.SubstituteRule `json:"rule"`
	// NothingFits is the share of queries, their relevant tools taken out,
	// for which the rule substitutes nothing.
	NothingFits float64 `json:"nothingFits"`
	// Recall is the share of queries, relevant tools present, for which it
	// substitutes a relevant tool.
	Recall float64 `json:"recall"`
	// Precision is the share of its substitutions (relevant tools present)
	// that run a relevant tool.
	Precision float64 `json:"precision"`
	// Substituted is the share of queries (relevant tools present) it
	// substitutes at all.
	Substituted float64 `json:"substituted"`
	N           int     `json:"n"`
}

// CurvePoint is the decision at one operating point: the run's rule with
// its confidence bar at Confidence.
type CurvePoint struct {
	Confidence  float64 `json:"confidence"`
	Recall      float64 `json:"recall"`
	Precision   float64 `json:"precision"`
	NothingFits float64 `json:"nothingFits"`
	Substituted float64 `json:"substituted"`
}

// curveStep is the spacing of the curve's operating points.
const curveStep = 0.025

// curve measures the rule r over its operating parameter, the decision
// model's confidence bar, from curveStep to 1 − curveStep: recall against
// precision when the right tool is present, and "nothing fits" when it is
// taken out.
func curve(samples []looSample, r retrieval.SubstituteRule, model retrieval.DecisionModel) []CurvePoint {
	var out []CurvePoint
	for i := 1; float64(i)*curveStep < 1-1e-9; i++ {
		r.Confidence = round3(float64(i) * curveStep)
		m := measureRule(samples, r, model)
		out = append(out, CurvePoint{Confidence: r.Confidence, Recall: m.Recall, Precision: m.Precision, NothingFits: m.NothingFits, Substituted: m.Substituted})
	}
	return out
}

// looSample is what one query's two searches found: the candidates'
// similarities in ranking order, and whether the first is relevant.
type looSample struct {
	present      []retrieval.Candidate
	presentRight bool
	absent       []retrieval.Candidate
}

func (o Options) leaveOneOut(ctx context.Context, svc *retrieval.Service, caller access.Caller, queries []QueryRecord, record *retrieval.Record) ([]LeaveOneOut, []CurvePoint, *retrieval.DecisionModel, error) {
	p := &progress{w: o.Progress, label: "leave-one-out", total: len(queries)}
	samples := make([]looSample, 0, len(queries))
	search := func(q QueryRecord, exclude []string) ([]retrieval.Candidate, string, error) {
		hits, _, err := svc.Rank(ctx, retrieval.FulfilmentQuery(q.Query, "", caller, exclude))
		if err != nil {
			return nil, "", fmt.Errorf("evaluation: leave-one-out %q: %w", q.Query, err)
		}
		sims := make([]retrieval.Candidate, len(hits))
		for i, h := range hits {
			sims[i] = h.Candidate() // what the workflow's candidates carry
			sims[i].Record, sims[i].Recorded = record.Of(h.Tool.ID)
		}
		first := ""
		if len(hits) > 0 {
			first = hits[0].Tool.ID
		}
		return sims, first, nil
	}
	for i, q := range queries {
		present, first, err := search(q, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		absent, _, err := search(q, q.RelevantToolIDs)
		if err != nil {
			return nil, nil, nil, err
		}
		samples = append(samples, looSample{present: present, presentRight: slices.Contains(q.RelevantToolIDs, first), absent: absent})
		p.set(i + 1)
	}
	var fitted *retrieval.DecisionModel
	if o.FitSamples != "" {
		m, rw, err := fitDecision(o.FitSamples, samples)
		if err != nil {
			return nil, nil, nil, err
		}
		fitted = &m
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "record weight fitted over the default model's other weights: %g\n", rw)
		}
	}
	model := retrieval.DefaultDecisionModel
	if fitted != nil {
		fitted.EvidenceShift = model.EvidenceShift
		model = *fitted // the run measures the model it fitted
	}
	if o.RecordWeight != nil {
		model.EvidenceWeights[retrieval.DecisionEvidenceFeatures-2] = *o.RecordWeight
	}
	if o.RecordShift != nil {
		model.EvidenceWeights[retrieval.DecisionEvidenceFeatures-1] = *o.RecordShift
	}
	if o.EvidenceShift != nil {
		model.EvidenceShift = *o.EvidenceShift
		if fitted != nil {
			fitted.EvidenceShift = *o.EvidenceShift
		}
	}
	// Completed as the workflow completes a run's rule.
	rule := o.Rule.Or(retrieval.DefaultSubstituteRule())
	out := []LeaveOneOut{measureRule(samples, rule, model)}
	if o.Calibrate {
		if best, ok := calibrate(samples, 0.95); ok {
			out = append(out, best)
		}
	}
	return out, curve(samples, rule, model), fitted, nil
}

func measureRule(samples []looSample, r retrieval.SubstituteRule, model retrieval.DecisionModel) LeaveOneOut {
	m := LeaveOneOut{Rule: r, N: len(samples)}
	var nothing, right, subs int
	for _, s := range samples {
		if !r.SubstituteWith(model, s.absent) {
			nothing++
		}
		if r.SubstituteWith(model, s.present) {
			subs++
			if s.presentRight {
				right++
			}
		}
	}
	if n := float64(len(samples)); n > 0 {
		m.NothingFits, m.Recall, m.Substituted = float64(nothing)/n, float64(right)/n, float64(subs)/n
	}
	if subs > 0 {
		m.Precision = float64(right) / float64(subs)
	} else {
		m.Precision = 1 // no substitution is never a wrong one
	}
	return m
}

// calibrate sweeps the rule's parameters (a threshold, a similarity margin
// and a score margin for the close-match clause, and an evidence margin)
// and returns the rule with the highest recall among those reaching
// minPrecision (ties: more "nothing fits"); ok is false when none reaches
// it. The evidence margins start above the close-match score margins: a
// lead that substitutes on its own must be wider than one that merely
// confirms a close match.
func calibrate(samples []looSample, minPrecision float64) (LeaveOneOut, bool) {
	var best LeaveOneOut
	found := false
	for t := 0.50; t <= 0.801; t += 0.01 {
		for _, margin := range []float64{0, 0.03, 0.05, 0.1} {
			for sm := 0.0; sm <= 6.01; sm += 0.25 {
				for _, em := range []float64{0, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30} {
					if em > 0 && em <= sm {
						continue
					}
					m := measureRule(samples, retrieval.SubstituteRule{Threshold: round3(t), Margin: margin, ScoreMargin: sm, EvidenceMargin: em}, retrieval.DecisionModel{})
					if m.Precision < minPrecision || m.Substituted == 0 {
						continue
					}
					if !found || m.Recall > best.Recall || (m.Recall == best.Recall && m.NothingFits > best.NothingFits) {
						best, found = m, true
					}
				}
			}
		}
	}
	return best, found
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

func writeLeaveOneOut(out io.Writer, o Options, res []LeaveOneOut, pts []CurvePoint, fitted *retrieval.DecisionModel, nq, nh int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "leave-one-out: queries: %d  history: %d  embedder: %s  (hybrid search, %d candidates, the workflow's rule)\n",
		nq, nh, o.Embedder.Name(), retrieval.FulfilmentCandidates)
	fmt.Fprintf(&b, "%-75s %12s %9s %10s %12s\n", "rule", "nothing fits", "recall", "precision", "substituted")
	for i, r := range res {
		label := fmt.Sprintf("confidence %.3f threshold %.3f margin %.3f score margin %.2f evidence %.0f", r.Rule.Confidence, r.Rule.Threshold, r.Rule.Margin, r.Rule.ScoreMargin, r.Rule.EvidenceMargin)
		if i == 1 {
			label += " *"
		}
		fmt.Fprintf(&b, "%-75s %12.4f %9.4f %10.4f %12.4f\n", label, r.NothingFits, r.Recall, r.Precision, r.Substituted)
	}
	if len(res) > 1 {
		b.WriteString("* calibrated: the most recall at precision ≥ 0.95\n")
	} else if o.Calibrate {
		b.WriteString("no threshold and margin reach precision 0.95 on this set\n")
	}
	fmt.Fprintf(&b, "\ncurve over the confidence bar (right tool present: recall, precision, substituted; taken out: nothing fits)\n")
	fmt.Fprintf(&b, "%10s %9s %10s %12s %12s\n", "confidence", "recall", "precision", "nothing fits", "substituted")
	for _, p := range pts {
		fmt.Fprintf(&b, "%10.3f %9.4f %10.4f %12.4f %12.4f\n", p.Confidence, p.Recall, p.Precision, p.NothingFits, p.Substituted)
	}
	if fitted != nil {
		mj, err := json.Marshal(fitted)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "\nfitted decision model (%s): %s\n", o.FitSamples, mj)
	}
	if !o.JSON {
		return writeReport(out, &b, nil)
	}
	last := map[string]any{"leaveOneOut": res[0], "curve": pts}
	if len(res) > 1 {
		last["calibrated"] = res[1]
	}
	if fitted != nil {
		last["decisionModel"] = fitted
	}
	return writeReport(out, &b, last)
}
