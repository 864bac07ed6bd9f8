package retrieval

import (
	"math"
	"slices"
	"testing"
)

func TestRecordLogOdds(t *testing.T) {
	var none *Record
	if lo, ok := none.Of("a"); lo != 0 || ok {
		t.Fatalf("nil record: %v %v, want 0 false", lo, ok)
	}
	r := NewRecord(map[string]RecordEntry{
		"often-wrong": {First: 20, Right: 4},
		"reliable":    {First: 20, Right: 20},
		"average":     {First: 40, Right: 30},
		"never-first": {},
	})
	if math.Abs(r.Rate-54.0/80) > 1e-12 {
		t.Fatalf("rate %v, want %v", r.Rate, 54.0/80)
	}
	if lo, ok := r.Of("unknown"); lo != 0 || ok {
		t.Fatalf("a tool without a record: %v %v, want 0 false", lo, ok)
	}
	if lo, ok := r.Of("never-first"); lo != 0 || ok {
		t.Fatalf("a tool never first: %v %v, want 0 false", lo, ok)
	}
	wrong, _ := r.Of("often-wrong")
	good, _ := r.Of("reliable")
	avg, ok := r.Of("average")
	if !ok || !(wrong < -1 && good > 0.5 && math.Abs(avg) < 0.5) {
		t.Fatalf("log odds: often wrong %v, reliable %v, average %v", wrong, good, avg)
	}
	// Without its Rate (a record decoded from an older form) it is computed.
	bare := &Record{Tools: r.Tools}
	if lo := bare.LogOdds("often-wrong"); math.Abs(lo-wrong) > 1e-12 {
		t.Fatalf("without Rate: %v, want %v", lo, wrong)
	}
	// One wrong first place weighs less than many against the prior.
	few := NewRecord(map[string]RecordEntry{"x": {First: 1}, "z": {First: 10}, "y": {First: 50, Right: 40}})
	if x, z := few.LogOdds("x"), few.LogOdds("z"); x >= 0 || x < -1 || z > x-1 {
		t.Fatalf("one wrong first place: %v, ten: %v", x, z)
	}
}

// The record changes the decision only for a first candidate that has
// one: a first without a record reads exactly as the model without the
// record's weights, and so does every search the zero-shot part reads.
func TestRecordChangesOnlyRecordedTools(t *testing.T) {
	evidence := make([]Candidate, FulfilmentCandidates)
	for i := range evidence {
		evidence[i] = Candidate{Similarity: 0.6 - 0.02*float64(i), Score: 12 - float64(i), Learned: 2}
	}
	zeroShot := make([]Candidate, FulfilmentCandidates)
	for i := range zeroShot {
		zeroShot[i] = Candidate{Similarity: 0.6 - 0.02*float64(i), Score: 12 - float64(i)}
	}
	before := DefaultDecisionModel // the model as it was before records
	before.EvidenceWeights[DecisionEvidenceFeatures-2], before.EvidenceWeights[DecisionEvidenceFeatures-1] = 0, 0
	m := DefaultDecisionModel
	if m.EvidenceWeights[DecisionEvidenceFeatures-2] <= 0 {
		t.Fatalf("the default model does not read the record: %v", m.EvidenceWeights)
	}
	with := func(cands []Candidate, lo float64, ok bool) []Candidate {
		out := slices.Clone(cands)
		out[0].Record, out[0].Recorded = lo, ok
		return out
	}
	for _, cands := range [][]Candidate{evidence, zeroShot} {
		if got, want := m.Confidence(cands), before.Confidence(cands); got != want {
			t.Fatalf("no record: confidence %v, want %v as before records", got, want)
		}
		// A record on another candidate than the first changes nothing.
		other := slices.Clone(cands)
		other[1].Record, other[1].Recorded = -3, true
		if got, want := m.Confidence(other), before.Confidence(cands); got != want {
			t.Fatalf("the second's record: confidence %v, want %v", got, want)
		}
	}
	// Zero-shot, a record changes nothing.
	if got, want := m.Confidence(with(zeroShot, -3, true)), before.Confidence(zeroShot); got != want {
		t.Fatalf("zero-shot with a bad record: confidence %v, want %v", got, want)
	}
	// With evidence: a tool often first and wrong loses confidence; an
	// average or better record reads alike, shifted by DefaultRecordShift.
	base := before.Confidence(evidence)
	avg := m.Confidence(with(evidence, 0, true))
	good := m.Confidence(with(evidence, 2, true))
	bad := m.Confidence(with(evidence, -2, true))
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	if math.Abs(logit(avg)-logit(base)-DefaultRecordShift) > 1e-9 || good != avg {
		t.Fatalf("average record %v, good %v, none %v: want the shift %v for both", avg, good, base, DefaultRecordShift)
	}
	if want := logit(avg) - 2*DefaultRecordWeight; math.Abs(logit(bad)-want) > 1e-9 || bad >= base {
		t.Fatalf("bad record: log odds %v, want %v (below no record's %v)", logit(bad), want, logit(base))
	}
	// The verdict follows: a first the rule substitutes without a record is
	// refused with a bad enough one.
	r := DefaultSubstituteRule()
	hi := slices.Clone(evidence)
	for i := range hi {
		hi[i].Similarity = 0.9 - 0.05*float64(i)
	}
	hi[0].Score, hi[0].Learned = 40, 10
	if !r.Substitute(hi) {
		t.Fatalf("the fixture's first is not substituted (confidence %v)", m.Confidence(hi))
	}
	if r.Substitute(with(hi, -8, true)) {
		t.Fatalf("a first use found wrong nearly always was substituted (confidence %v)", m.Confidence(with(hi, -8, true)))
	}
}

// The twenty-sixth round moved NoRecordDiscount of the evidence shift onto
// "has a record": a search whose first has a record reads exactly as the
// twenty-fifth round's model read it, one whose first has none (as before
// the retraining has learned any records) reads NoRecordDiscount less sure
// in log odds, and the zero-shot part is untouched.
func TestNoRecordReadsLessSure(t *testing.T) {
	refit := DefaultDecisionModel
	refit.EvidenceShift = RefitEvidenceShift
	refit.EvidenceWeights[DecisionEvidenceFeatures-1] = RefitRecordShift
	if NoRecordDiscount <= 0 || DefaultDecisionModel == refit {
		t.Fatalf("no discount: %v", NoRecordDiscount)
	}
	evidence := make([]Candidate, FulfilmentCandidates)
	zeroShot := make([]Candidate, FulfilmentCandidates)
	for i := range evidence {
		evidence[i] = Candidate{Similarity: 0.6 - 0.02*float64(i), Score: 12 - float64(i), Learned: 2}
		zeroShot[i] = Candidate{Similarity: 0.6 - 0.02*float64(i), Score: 12 - float64(i)}
	}
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	m := DefaultDecisionModel
	for _, lo := range []float64{-2, 0, 1} {
		rec := slices.Clone(evidence)
		rec[0].Record, rec[0].Recorded = lo, true
		if got, want := m.Confidence(rec), refit.Confidence(rec); math.Abs(got-want) > 1e-12 {
			t.Fatalf("record %v: confidence %v, want %v as before", lo, got, want)
		}
	}
	if got, want := logit(m.Confidence(evidence)), logit(refit.Confidence(evidence))-NoRecordDiscount; math.Abs(got-want) > 1e-9 {
		t.Fatalf("no record: log odds %v, want %v", got, want)
	}
	if got, want := m.Confidence(zeroShot), refit.Confidence(zeroShot); got != want {
		t.Fatalf("zero-shot: confidence %v, want %v", got, want)
	}
}
