package retrieval

import "testing"

func TestSubstituteRule(t *testing.T) {
	c := func(pairs ...float64) []Candidate {
		var out []Candidate
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, Candidate{Similarity: pairs[i], Score: pairs[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		rule  SubstituteRule
		cands []Candidate
		want  bool
	}{
		{SubstituteRule{Threshold: 0.6}, nil, false},
		{SubstituteRule{Threshold: 0.6}, c(0.59, 3), false},
		{SubstituteRule{Threshold: 0.6}, c(0.6, 1, 0.7, 0.5), true}, // no margins: the first candidate decides
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, c(0.7, 1, 0.66, 0.5), false},
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, c(0.7, 1, 0.6, 0.5, 0.64, 0.4), true},
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, c(0.7, 1, 0.5, 0.9, 0.68, 0.1), false},
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, c(0.7, 1), true},
		{SubstituteRule{Threshold: 0.6, ScoreMargin: 0.5}, c(0.7, 2, 0.3, 1.6), false},
		{SubstituteRule{Threshold: 0.6, ScoreMargin: 0.5}, c(0.7, 2, 0.3, 1.4), true},
	} {
		if got := tc.rule.Substitute(tc.cands); got != tc.want {
			t.Errorf("%+v on %v = %v, want %v", tc.rule, tc.cands, got, tc.want)
		}
	}
}

func TestSubstituteRuleEvidence(t *testing.T) {
	r := SubstituteRule{Threshold: 0.67, ScoreMargin: 4.25, EvidenceMargin: 22}
	for _, tc := range []struct {
		name  string
		cands []Candidate
		want  bool
	}{
		{"close and clear", []Candidate{{0.72, 10}, {0.5, 5}}, true},
		{"close but a near tie in score", []Candidate{{0.72, 10}, {0.7, 6}}, false},
		{"far from the description, small lead", []Candidate{{0.4, 20}, {0.5, 2}}, false},
		{"far from the description, evidence lead", []Candidate{{0.4, 30}, {0.5, 8}}, true},
		{"alone and close", []Candidate{{0.7, 3}}, true},
		{"alone and far", []Candidate{{0.5, 40}}, false},
	} {
		ok, reason := r.Decide(tc.cands)
		if ok != tc.want || reason == "" {
			t.Errorf("%s: Decide = %v %q, want %v", tc.name, ok, reason, tc.want)
		}
	}
	if !(SubstituteRule{}).IsZero() || DefaultSubstituteRule().IsZero() {
		t.Fatal("IsZero")
	}
}

func TestSubstituteRuleOr(t *testing.T) {
	def := DefaultSubstituteRule()
	for _, tc := range []struct{ r, want SubstituteRule }{
		{SubstituteRule{}, def},
		{SubstituteRule{Threshold: 0.8}, SubstituteRule{Threshold: 0.8}},
		{SubstituteRule{ScoreMargin: 2}, SubstituteRule{Threshold: def.Threshold, ScoreMargin: 2}},
		{SubstituteRule{Threshold: 0.5, EvidenceMargin: 9}, SubstituteRule{Threshold: 0.5, EvidenceMargin: 9}},
	} {
		if got := tc.r.Or(def); got != tc.want {
			t.Errorf("%+v.Or(default) = %+v, want %+v", tc.r, got, tc.want)
		}
	}
}
