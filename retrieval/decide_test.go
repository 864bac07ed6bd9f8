package retrieval

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// c builds candidates from (similarity, score) pairs.
func c(pairs ...float64) []Candidate {
	var out []Candidate
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Candidate{Similarity: pairs[i], Score: pairs[i+1]})
	}
	return out
}

func TestSubstituteRule(t *testing.T) {
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
		{"close and clear", c(0.72, 10, 0.5, 5), true},
		{"close but a near tie in score", c(0.72, 10, 0.7, 6), false},
		{"far from the description, small lead", c(0.4, 20, 0.5, 2), false},
		{"far from the description, evidence lead", c(0.4, 30, 0.5, 8), true},
		{"alone and close", c(0.7, 3), true},
		{"alone and far", c(0.5, 40), false},
	} {
		ok, reason := r.Decide(tc.cands)
		if ok != tc.want || reason == "" {
			t.Errorf("%s: Decide = %v %q, want %v", tc.name, ok, reason, tc.want)
		}
	}
	if !(SubstituteRule{}).IsZero() || DefaultSubstituteRule().IsZero() || CloseMatchRule().IsZero() {
		t.Fatal("IsZero")
	}
}

func TestSubstituteRuleOr(t *testing.T) {
	def := DefaultSubstituteRule()
	for _, tc := range []struct{ r, want SubstituteRule }{
		{SubstituteRule{}, def},
		{SubstituteRule{Threshold: 0.8}, SubstituteRule{Threshold: 0.8}},
		{SubstituteRule{ScoreMargin: 2}, SubstituteRule{Confidence: def.Confidence, ScoreMargin: 2}},
		{SubstituteRule{Threshold: 0.5, EvidenceMargin: 9}, SubstituteRule{Threshold: 0.5, EvidenceMargin: 9}},
		{SubstituteRule{Confidence: 0.7}, SubstituteRule{Confidence: 0.7}},
		{SubstituteRule{Margin: 0.1}, SubstituteRule{Confidence: def.Confidence, Margin: 0.1}},
		{SubstituteRule{ScoreMargin: 2}.Or(CloseMatchRule()), SubstituteRule{Threshold: DefaultSubstituteThreshold, ScoreMargin: 2}},
	} {
		if got := tc.r.Or(def); got != tc.want {
			t.Errorf("%+v.Or(default) = %+v, want %+v", tc.r, got, tc.want)
		}
	}
}

func TestInputFit(t *testing.T) {
	for _, tc := range []struct {
		required, inputs []string
		want             int
	}{
		{[]string{"amount", "from", "to"}, nil, 0},                              // no inputs: unknown
		{[]string{"amount", "from", "to"}, []string{"to", "amount", "from"}, 1}, // all there
		{[]string{"from_currency"}, []string{"fromCurrency"}, 1},                // as the router maps names
		{[]string{"amount", "from", "to"}, []string{"amount", "from"}, -1},      // one missing
		{nil, []string{"anything"}, 0},                                          // nothing required: nothing to fill, unknown
	} {
		if got := InputFit(tc.required, tc.inputs); got != tc.want {
			t.Errorf("InputFit(%v, %v) = %d, want %d", tc.required, tc.inputs, got, tc.want)
		}
	}
}

// A tool the verb's inputs cannot run is never substituted, whatever the
// rule: the substitution would fail on its required parameters.
func TestSubstituteRuleInputFit(t *testing.T) {
	clear := []Candidate{{Similarity: 0.9, Score: 40, Keyword: 5}, {Similarity: 0.3, Score: 1}}
	for _, r := range []SubstituteRule{DefaultSubstituteRule(), CloseMatchRule(), {Threshold: 0.1}} {
		if !r.Substitute(clear) {
			t.Fatalf("%+v refuses a clear match", r)
		}
		missing := slices.Clone(clear)
		missing[0].InputFit = -1
		ok, why := r.Decide(missing)
		if ok || !strings.Contains(why, "required parameters") {
			t.Fatalf("%+v on a tool the inputs cannot fill: %v %q", r, ok, why)
		}
	}
}

// The ranking's first that provides the requested verb itself substitutes
// even where look-alikes hold the model's confidence under the bar (the
// 10,000-tool catalogue: CONVERT_CURRENCY first by 4.4 points, but a
// corpus tool's description a little more similar); two providers of the
// verb, or inputs that cannot fill it, do not.
func TestSubstituteRuleSameVerb(t *testing.T) {
	crowd := []Candidate{
		{Similarity: 0.822, Score: 8.64, Keyword: 1.2, InputFit: 1, SameVerb: true},
		{Similarity: 0.725, Score: 4.21, Keyword: 1.0},
		{Similarity: 0.846, Score: 3.83, Keyword: 1.1},
		{Similarity: 0.713, Score: 3.77},
	}
	r := DefaultSubstituteRule()
	noVerb := slices.Clone(crowd)
	noVerb[0].SameVerb = false
	if ok, why := r.Decide(noVerb); ok {
		t.Fatalf("the fixture should sit under the bar without the verb: %q", why)
	}
	if ok, why := r.Decide(crowd); !ok || !strings.Contains(why, "provides the verb") {
		t.Fatalf("the only provider of the verb, first: %v %q", ok, why)
	}
	two := slices.Clone(crowd)
	two[2].SameVerb = true
	if ok, why := r.Decide(two); ok {
		t.Fatalf("two providers of the verb must be left to the model and the rule: %q", why)
	}
	missing := slices.Clone(crowd)
	missing[0].InputFit = -1
	if ok, _ := r.Decide(missing); ok {
		t.Fatal("a provider of the verb the inputs cannot fill must not run")
	}
	second := slices.Clone(noVerb)
	second[1].SameVerb = true
	if ok, _ := r.Decide(second); ok {
		t.Fatal("a provider of the verb ranked second must not promote the first")
	}
}

// The default model's confidence grows with the evidence a search shows:
// a closer match, a wider lead, signals that agree.
func TestDecisionConfidence(t *testing.T) {
	m := DefaultDecisionModel
	weak := []Candidate{{Similarity: 0.45, Score: 3, Keyword: 1}, {Similarity: 0.47, Score: 2.8, Keyword: 1.5}, {Similarity: 0.4, Score: 2}}
	closer := slices.Clone(weak)
	closer[0].Similarity = 0.75
	leading := slices.Clone(weak)
	leading[0].Score = 12
	agreeing := slices.Clone(weak)
	agreeing[0].Keyword = 3
	base := m.Confidence(weak)
	for name, cands := range map[string][]Candidate{"closer": closer, "leading": leading, "keywords agree": agreeing} {
		if got := m.Confidence(cands); got <= base {
			t.Errorf("%s: confidence %.3f, not above the weak match's %.3f", name, got, base)
		}
	}
	if r := DefaultSubstituteRule(); r.Substitute(weak) {
		t.Errorf("the default rule substitutes a weak near tie (confidence %.3f)", base)
	}
	if m.Confidence(nil) != 0 {
		t.Error("no candidates, some confidence")
	}
	// Every feature is evidence for the first candidate: the fitted weights
	// are positive, so the confidence never falls as evidence grows, and a
	// candidate alone (a small catalogue) is judged by its own strength.
	for i, w := range m.Weights {
		if w <= 0 {
			t.Errorf("weight %d = %v, want > 0", i, w)
		}
	}
	if alone := m.Confidence([]Candidate{{Similarity: 0.8, Score: 8}}); alone < m.Confidence(closer) {
		t.Errorf("a close candidate alone: confidence %.3f", alone)
	}
}

// Candidates the inputs cannot fill are no alternative: a first candidate
// that leads only the runnable ones by far is weighed against those.
func TestSubstituteRuleRunnableAlternatives(t *testing.T) {
	cands := []Candidate{
		{Similarity: 0.55, Score: 7, Keyword: 4, InputFit: 1},
		{Similarity: 0.50, Score: 6.5, Keyword: 3, InputFit: -1},
		{Similarity: 0.45, Score: 6, Keyword: 2, InputFit: -1},
		{Similarity: 0.30, Score: 1, InputFit: 1},
		{Similarity: 0.25, Score: 0.5, InputFit: 1},
	}
	unknown := make([]Candidate, len(cands))
	for i, c := range cands {
		c.InputFit = 0
		unknown[i] = c
	}
	m := DefaultDecisionModel
	if got, base := m.Confidence(runnable(cands)), m.Confidence(unknown); got <= base {
		t.Fatalf("confidence against runnable candidates %.3f, not above %.3f against all", got, base)
	}
	if got := runnable(unknown); len(got) != len(unknown) {
		t.Fatalf("without inputs runnable dropped candidates: %v", got)
	}
	if got := runnable(cands); len(got) != 3 || got[0] != cands[0] || got[1] != cands[3] {
		t.Fatalf("runnable = %v", got)
	}
}

// The evaluation sets carry no inputs, so the decision model was fitted
// without them: inputs unknown (InputFit 0) or filling every candidate
// (+1) must leave the confidence and the verdict as the fitted model
// gives them, in both regimes, so that the measured figures are the
// behaviour shipped. Only a candidate the inputs cannot fill changes them.
func TestInputFitNeutralWhereItCannotDiscriminate(t *testing.T) {
	base := make([]Candidate, FulfilmentCandidates)
	for i := range base {
		base[i] = Candidate{Similarity: 0.72 - 0.04*float64(i), Score: 9 - 0.8*float64(i), Keyword: 2 - 0.3*float64(i)}
	}
	used := slices.Clone(base)
	for i := range used {
		used[i].Learned = 0.5
	}
	for name, cands := range map[string][]Candidate{"zero-shot": base, "with usage evidence": used} {
		fill := slices.Clone(cands)
		for i := range fill {
			fill[i].InputFit = 1
		}
		m := DefaultDecisionModel
		if got, want := m.Confidence(fill), m.Confidence(cands); got != want {
			t.Errorf("%s: inputs filling every candidate: confidence %v, want %v as without inputs", name, got, want)
		}
		for _, bar := range []float64{0.2, DefaultSubstituteConfidence, 0.6} {
			r := SubstituteRule{Confidence: bar}
			ok, _ := r.Decide(cands)
			okFill, _ := r.Decide(fill)
			if ok != okFill {
				t.Errorf("%s, bar %.3f: %v without inputs, %v with inputs filling every candidate", name, bar, ok, okFill)
			}
		}
		second := slices.Clone(cands)
		second[1].InputFit = -1
		if m.Confidence(runnable(second)) == m.Confidence(cands) {
			t.Errorf("%s: a runner-up the inputs cannot fill left the confidence unchanged", name)
		}
	}
}

// A search where most candidates carry usage evidence is read by the
// model's evidence part; one where a few do (a young deployment) by the
// zero-shot part, as is every search of a model without an evidence part.
func TestDecisionRegimes(t *testing.T) {
	cands := make([]Candidate, FulfilmentCandidates)
	for i := range cands {
		cands[i] = Candidate{Similarity: 0.7 - 0.03*float64(i), Score: 10 - float64(i)}
	}
	if HasEvidence(cands) {
		t.Fatal("zero-shot candidates read as having usage evidence")
	}
	few := slices.Clone(cands)
	few[0].Learned = 3
	if HasEvidence(few) {
		t.Fatal("one used candidate of ten read as a search with usage evidence")
	}
	if HasEvidence(few[:2]) {
		t.Fatal("a small catalogue's one used tool read as a search with usage evidence")
	}
	many := slices.Clone(cands)
	for i := range many[:FulfilmentCandidates/2] {
		many[i].Learned = 1
	}
	if !HasEvidence(many) {
		t.Fatal("half the candidates used, not read as a search with usage evidence")
	}
	m := DecisionModel{Bias: -1, Weights: [DecisionFeatures]float64{1}, EvidenceBias: 2}
	zeroShot := DecisionModel{Bias: m.Bias, Weights: m.Weights}
	if got, want := m.Confidence(few), zeroShot.Confidence(few); got != want {
		t.Errorf("few used: confidence %v, want the zero-shot part's %v", got, want)
	}
	if got, want := m.Confidence(many), 1/(1+math.Exp(-2)); math.Abs(got-want) > 1e-12 {
		t.Errorf("many used: confidence %v, want the evidence part's %v", got, want)
	}
	m.EvidenceShift = -2
	if got := m.Confidence(many); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("shifted by -2: confidence %v, want 0.5", got)
	}
	if got, want := zeroShot.Confidence(many), zeroShot.Confidence(cands); got == 0 || math.Abs(got-want) > 1e-12 {
		t.Errorf("a model without an evidence part: %v with evidence, %v without; want the same", got, want)
	}
}

// EvidenceFeatures say how much of the first's lead the usage signals
// opened, and whether a cold candidate the query itself ranks best was
// overtaken.
func TestEvidenceFeatures(t *testing.T) {
	// The query's own best (score 9 by its own signals) is the second, a
	// cold tool; the first leads by 8 learned points.
	cands := []Candidate{{Similarity: 0.5, Score: 14, Learned: 8}, {Similarity: 0.7, Score: 9}, {Similarity: 0.4, Score: 5, Learned: 1}}
	f := EvidenceFeatures(cands)
	base := Features(cands)
	if !slices.Equal(f[:DecisionFeatures], base[:]) {
		t.Fatalf("the first features %v, want Features %v", f[:DecisionFeatures], base)
	}
	if f[7] != 1 || f[9] != 1 || f[10] != 1 {
		t.Fatalf("first used %v, cold own-best overtaken %v, first not own-best %v; want 1, 1, 1", f[7], f[9], f[10])
	}
	if want := math.Log1p(5) + math.Log1p(3); math.Abs(f[8]-want) > 1e-12 {
		t.Fatalf("lead opened by use %v, want %v (log lead 5 less signed log of own lead −3)", f[8], want)
	}
	// The same scores earned by the query's own signals: nothing learned.
	own := []Candidate{{Similarity: 0.5, Score: 14}, {Similarity: 0.7, Score: 9}, {Similarity: 0.4, Score: 5}}
	g := EvidenceFeatures(own)
	if g[7] != 0 || g[8] != 0 || g[9] != 0 || g[10] != 0 {
		t.Fatalf("no usage evidence, evidence features %v", g[DecisionFeatures:])
	}
}

func TestMissingInputs(t *testing.T) {
	for _, tc := range []struct {
		required, inputs []string
		want             string
	}{
		{[]string{"amount", "from", "to"}, nil, "amount,from,to"},
		{[]string{"amount", "from", "to"}, []string{"Amount", "FROM"}, "to"},
		{[]string{"from_unit"}, []string{"from-unit"}, ""},
		{nil, nil, ""},
	} {
		if got := strings.Join(MissingInputs(tc.required, tc.inputs), ","); got != tc.want {
			t.Errorf("MissingInputs(%v, %v) = %q, want %q", tc.required, tc.inputs, got, tc.want)
		}
	}
}

// A candidate the deployment cannot run (its module is not served) is
// never substituted, but unlike a tool the inputs cannot fill it stays a
// rival to the first: the verb may mean it.
func TestSubstituteRuleUnavailable(t *testing.T) {
	clear := []Candidate{{Similarity: 0.9, Score: 40, Keyword: 5}, {Similarity: 0.3, Score: 1}}
	for _, r := range []SubstituteRule{DefaultSubstituteRule(), CloseMatchRule(), {Threshold: 0.1}} {
		gone := slices.Clone(clear)
		gone[0].Unavailable = true
		if ok, why := r.Decide(gone); ok || !strings.Contains(why, "cannot run") {
			t.Fatalf("%+v on a tool the deployment cannot run: %v %q", r, ok, why)
		}
	}
	// A near tie with a tool that cannot run here is no tie.
	tie := []Candidate{{Similarity: 0.8, Score: 10.1, Keyword: 2}, {Similarity: 0.8, Score: 10, Keyword: 2}, {Similarity: 0.2, Score: 1}}
	r := DefaultSubstituteRule()
	if r.Substitute(tie) {
		t.Fatalf("a near tie substitutes: %+v", tie)
	}
	tie[1].Unavailable = true
	if ok, why := r.Decide(tie); ok {
		t.Fatalf("the first against a look-alike that cannot run here: %v %q; want the near tie refused still", ok, why)
	}
	// One the inputs cannot fill is no rival.
	tie[1].Unavailable, tie[1].InputFit = false, -1
	if ok, why := r.Decide(tie); !ok {
		t.Fatalf("the first against a look-alike the inputs cannot fill: %v %q", ok, why)
	}
}

func TestInputFitValues(t *testing.T) {
	num := []Param{{Name: "amount", Types: []string{"number"}}, {Name: "from", Types: []string{"string"}}, {Name: "to"}}
	for _, tc := range []struct {
		name     string
		required []Param
		inputs   map[string]any
		want     int
		why      string
	}{
		{"no inputs: unknown", num, nil, 0, ""},
		{"all there, right types", num, map[string]any{"amount": 100.0, "from": "USD", "to": "EUR"}, 1, ""},
		{"a Go integer is a number", num, map[string]any{"amount": 100, "from": "USD", "to": 7}, 1, ""},
		{"a word for a number", num, map[string]any{"amount": "three", "from": "USD", "to": "EUR"}, -1, "amount is a string, the tool wants a number"},
		{"one missing", num, map[string]any{"amount": 1.0, "to": "EUR"}, -1, "no input fills from"},
		{"matched as the router maps names", []Param{{Name: "from_currency", Types: []string{"string"}}}, map[string]any{"fromCurrency": 3.0}, -1,
			"from_currency (input fromCurrency) is a number, the tool wants a string"},
		{"an exact name wins over a look-alike", []Param{{Name: "from", Types: []string{"string"}}}, map[string]any{"from": "USD", "FROM": 1.0}, 1, ""},
		{"two look-alikes are left to the mapping", []Param{{Name: "from", Types: []string{"string"}}}, map[string]any{"From": 2.0, "FROM": 1.0}, 1, ""},
		{"an integral number is an integer", []Param{{Name: "n", Types: []string{"integer"}}}, map[string]any{"n": 3.0}, 1, ""},
		{"a fraction is no integer", []Param{{Name: "n", Types: []string{"integer"}}}, map[string]any{"n": 2.5}, -1, "n is a number, the tool wants an integer"},
		{"one of several types", []Param{{Name: "q", Types: []string{"string", "null"}}}, map[string]any{"q": nil}, 1, ""},
		{"null is no boolean", []Param{{Name: "ok", Types: []string{"boolean"}}}, map[string]any{"ok": nil}, -1, "ok is null, the tool wants a boolean"},
		{"objects and arrays", []Param{{Name: "o", Types: []string{"object"}}, {Name: "a", Types: []string{"array"}}},
			map[string]any{"o": map[string]any{}, "a": []any{1.0}}, 1, ""},
		{"an array is no object", []Param{{Name: "o", Types: []string{"object"}}}, map[string]any{"o": []any{}}, -1, "o is an array, the tool wants an object"},
		{"nothing required: unknown", nil, map[string]any{"anything": 1.0}, 0, ""},
	} {
		got, why := InputFitValues(tc.required, tc.inputs)
		if got != tc.want || why != tc.why {
			t.Errorf("%s: InputFitValues = %d %q, want %d %q", tc.name, got, why, tc.want, tc.why)
		}
		if tc.want >= 0 {
			// Without types it is InputFit.
			names := make([]string, 0, len(tc.required))
			for _, p := range tc.required {
				names = append(names, p.Name)
			}
			var in []string
			for n := range tc.inputs {
				in = append(in, n)
			}
			if InputFit(names, in) != got {
				t.Errorf("%s: InputFit disagrees on names alone", tc.name)
			}
		}
	}
}

// fits marks candidates' input fit: +1 or -1 each, in order.
func fits(cands []Candidate, fit ...int) []Candidate {
	out := slices.Clone(cands)
	for i, f := range fit {
		out[i].InputFit = f
	}
	return out
}

// ChooseWith reads the first candidate that could run as if it ranked
// first: the runnable second substitutes where it is a confident match of
// its own, whatever the first that could not run scored.
func TestChooseRunnableFirst(t *testing.T) {
	r := DefaultSubstituteRule()
	m := DefaultDecisionModel
	// currency.rates first (the inputs do not fill it), the historical
	// rate second, a clear match among the tools that could run.
	cands := fits([]Candidate{
		{Similarity: 0.8, Score: 32.7, Keyword: 3},
		{Similarity: 0.78, Score: 30, Keyword: 2.5, SameVerb: true},
		{Similarity: 0.4, Score: 6},
		{Similarity: 0.3, Score: 5},
	}, -1, 1, 1, 1)
	if ok, why := r.DecideWith(m, cands); ok || !strings.Contains(why, "required parameters") {
		t.Fatalf("DecideWith reads the first only: %v %q", ok, why)
	}
	ch := r.ChooseWith(m, cands)
	if ch.Pick != 1 || ch.Read != 1 || !strings.Contains(ch.Skipped, "required parameters") || !strings.Contains(ch.Why, "confidence") {
		t.Fatalf("ChooseWith = %+v, want the second substituted", ch)
	}
	// Exactly as if it ranked first: the same decision on the candidates
	// that could run.
	if ok, why := r.DecideWith(m, cands[1:]); !ok || why != ch.Why {
		t.Fatalf("as first: %v %q, ChooseWith %q", ok, why, ch.Why)
	}
	// A candidate the inputs do not fill between them is skipped too.
	mid := slices.Insert(slices.Clone(cands), 1, Candidate{Similarity: 0.79, Score: 31, InputFit: -1})
	if ch := r.ChooseWith(m, mid); ch.Pick != 2 || ch.Read != 2 {
		t.Fatalf("past two the inputs do not fill: %+v", ch)
	}
	// One the deployment cannot run is not: the verb may mean it, so no
	// tool after it is read in its place, first or not.
	mid[1].InputFit, mid[1].Unavailable = 1, true
	if ch := r.ChooseWith(m, mid); ch.Pick != -1 || ch.Read != 0 {
		t.Fatalf("past one the deployment cannot run: %+v", ch)
	}
	gone := fits(cands, 1)
	gone[0].Unavailable = true
	if ch := r.ChooseWith(m, gone); ch.Pick != -1 || ch.Read != 0 || !strings.Contains(ch.Why, "cannot run") {
		t.Fatalf("past an unavailable first: %+v", ch)
	}
	// After the one read it stays a rival: a served tool among unserved
	// look-alikes does not lead them by default.
	rivals := fits([]Candidate{
		{Similarity: 0.8, Score: 32.7, Keyword: 3},
		{Similarity: 0.7, Score: 30, Keyword: 2.5},
		{Similarity: 0.69, Score: 29.8, Keyword: 2.5},
		{Similarity: 0.4, Score: 6},
	}, -1, 1, 1, 1)
	if ch := r.ChooseWith(m, rivals); ch.Pick != -1 {
		t.Fatalf("a near tie among runnable tools: %+v", ch)
	}
	rivals[2].Unavailable = true
	if ch := r.ChooseWith(m, rivals); ch.Pick != -1 || ch.Read != 1 {
		t.Fatalf("a near tie with a tool the deployment cannot run: %+v; want it a rival still", ch)
	}
	// The first that could run is a plain first when the first can: a
	// runnable first is decided as before.
	if ch := r.ChooseWith(m, fits(cands, 1)); ch.Read != 0 || ch.Skipped != "" {
		t.Fatalf("a runnable first: %+v", ch)
	}
	// None that could run: nothing, with the first's reason.
	none := fits(cands, -1, -1, -1, -1)
	if ch := r.ChooseWith(m, none); ch.Pick != -1 || ch.Read != 0 || !strings.Contains(ch.Why, "required parameters") {
		t.Fatalf("none runnable: %+v", ch)
	}
}

// The bars apply to the first candidate that could run as they would if
// it ranked first: a weak one (far from the query, a near tie with the
// next that could run, under the zero-shot floor, or short of the other
// bars) is not substituted because a strong first could not run.
func TestChooseRunnableFirstBars(t *testing.T) {
	m := DefaultDecisionModel
	strongFirst := Candidate{Similarity: 0.9, Score: 40, Keyword: 5, InputFit: -1}
	for _, tc := range []struct {
		name  string
		rule  SubstituteRule
		cands []Candidate
		why   string
	}{
		{"a near tie with the next that could run", DefaultSubstituteRule(),
			[]Candidate{strongFirst, {Similarity: 0.5, Score: 6, InputFit: 1}, {Similarity: 0.48, Score: 5.9, InputFit: 1}, {Similarity: 0.45, Score: 5.8, InputFit: 1}}, "confidence"},
		{"under the zero-shot floor, however wide its lead", DefaultSubstituteRule(),
			[]Candidate{strongFirst, {Similarity: 0.25, Score: 20, Keyword: 4, InputFit: 1}, {Similarity: 0.1, Score: 1, InputFit: 1}}, "below 0.30"},
		{"below a threshold", SubstituteRule{Threshold: 0.67},
			[]Candidate{strongFirst, {Similarity: 0.6, Score: 20, InputFit: 1}, {Similarity: 0.1, Score: 1, InputFit: 1}}, "threshold"},
		{"short of a score margin over the next that could run", SubstituteRule{Threshold: 0.5, ScoreMargin: 4.25},
			[]Candidate{strongFirst, {Similarity: 0.7, Score: 10, InputFit: 1}, {Similarity: 0.2, Score: 8, InputFit: 1}}, "score margin"},
	} {
		ch := tc.rule.ChooseWith(m, tc.cands)
		if ch.Pick != -1 || ch.Read != 1 || !strings.Contains(ch.Why, tc.why) {
			t.Errorf("%s: %+v, want the second read and refused (%s)", tc.name, ch, tc.why)
		}
		if ok, why := tc.rule.DecideWith(m, tc.cands[1:]); ok || why != ch.Why {
			t.Errorf("%s: as first %v %q, ChooseWith %q", tc.name, ok, why, ch.Why)
		}
	}
}

// Without inputs (InputFit 0 everywhere) ChooseWith is DecideWith on the
// first: the evaluation's searches, which carry no inputs, decide as
// before, and a first this deployment cannot run is refused as before.
func TestChooseUnknownFitUnchanged(t *testing.T) {
	m := DefaultDecisionModel
	rules := []SubstituteRule{DefaultSubstituteRule(), CloseMatchRule(), {Threshold: 0.5, Margin: 0.05}}
	// A deterministic spread of searches: similarities, scores and
	// signals from a small linear congruential sequence.
	x := uint32(7)
	next := func() float64 { x = x*1664525 + 1013904223; return float64(x>>8) / float64(1<<24) }
	for range 400 {
		n := 1 + int(next()*10)
		cands := make([]Candidate, n)
		score := 5 + 30*next()
		for i := range cands {
			cands[i] = Candidate{Similarity: next(), Score: score, Keyword: 4*next() - 1, Subword: 3*next() - 1, SameVerb: next() < 0.1}
			score -= 6 * next()
		}
		if next() < 0.3 {
			cands[0].Unavailable = true
		}
		for _, r := range rules {
			ok, why := r.DecideWith(m, cands)
			ch := r.ChooseWith(m, cands)
			if (ch.Pick == 0) != ok || (ch.Pick != 0 && ch.Pick != -1) || ch.Read != 0 || ch.Why != why || ch.Skipped != "" {
				t.Fatalf("%+v on %+v: ChooseWith %+v, DecideWith %v %q", r, cands, ch, ok, why)
			}
			if r.SubstituteWith(m, cands) != ok {
				t.Fatalf("SubstituteWith disagrees with DecideWith")
			}
		}
	}
}

// A runnable candidate below a first that could not run is read in its
// place only when the inputs fill it: a tool that takes no parameters (so
// any inputs would "fill" it) and does something else leads only the
// tools after it, however widely, and is never substituted.
func TestChooseRunnableFirstNeedsItsInputs(t *testing.T) {
	r := DefaultSubstituteRule()
	m := DefaultDecisionModel
	if InputFit(nil, []string{"foo"}) != 0 || InputFit([]string{"amount"}, nil) != 0 {
		t.Fatal("without required parameters, or without inputs, the fit is unknown")
	}
	cands := fits([]Candidate{
		{Similarity: 0.8, Score: 32.7, Keyword: 3, SameVerb: true}, // the conversion: inputs do not fill it
		{Similarity: 0.7, Score: 25, Keyword: 2},                   // a currency list: no parameters
		{Similarity: 0.3, Score: 3},
		{Similarity: 0.2, Score: 2},
	}, -1, 0, 0, 0)
	if ok, _ := r.DecideWith(m, cands[1:]); !ok {
		t.Fatal("the list would be a confident first on its own; the case tests nothing")
	}
	if ch := r.ChooseWith(m, cands); ch.Pick != -1 || ch.Read != 0 || !strings.Contains(ch.Why, "required parameters") {
		t.Fatalf("a runnable tool the inputs do not fill: %+v, want nothing substituted", ch)
	}
	cands[1].InputFit = 1
	if ch := r.ChooseWith(m, cands); ch.Pick != 1 {
		t.Fatalf("the same tool, filled by the inputs: %+v, want it substituted", ch)
	}
}
