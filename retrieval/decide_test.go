package retrieval

import "testing"

func TestSubstituteRule(t *testing.T) {
	for _, c := range []struct {
		rule SubstituteRule
		sims []float64
		want bool
	}{
		{SubstituteRule{Threshold: 0.6}, nil, false},
		{SubstituteRule{Threshold: 0.6}, []float64{0.59}, false},
		{SubstituteRule{Threshold: 0.6}, []float64{0.6, 0.7}, true}, // no margin: the first candidate decides
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, []float64{0.7, 0.66}, false},
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, []float64{0.7, 0.6, 0.64}, true},
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, []float64{0.7, 0.5, 0.68}, false},
		{SubstituteRule{Threshold: 0.6, Margin: 0.05}, []float64{0.7}, true},
	} {
		if got := c.rule.Substitute(c.sims); got != c.want {
			t.Errorf("%+v on %v = %v, want %v", c.rule, c.sims, got, c.want)
		}
	}
}
