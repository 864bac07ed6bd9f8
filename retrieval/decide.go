package retrieval

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// FulfilmentCandidates is how many candidates a novel verb's search returns.
const FulfilmentCandidates = 10

// DefaultSubstituteConfidence is the default rule's operating point: the
// decision model's confidence (DefaultDecisionModel) a first candidate
// needs to be substituted: the lowest bar with substitution precision ≥ .90
// both zero-shot and with dense history on the "choose" part of the
// MetaTool dev split (evaluation/TUNING.md, seventeenth round; the
// evidence part re-aligned to it in the twenty-fifth; docs/fulfilment.md,
// "When does a tool substitute?", gives the costs behind it).
const DefaultSubstituteConfidence = 0.425

// TeachConfidence is the confidence a substitution needs for its run to
// teach the verb's text (the rule of DefaultSubstituteRule with this bar
// must pick the same tool): a run below it still runs and counts as a
// use, but a service that learned from its own unsure choices would feed
// its mistakes back into the next decision (a bill paid as a currency
// conversion, then a rent). .55 is the lowest bar at which the decision's
// precision on the choose part reaches .95 with no usage evidence
// (.9558; with dense history .9217), the regime of a young deployment
// whose every use teaches (evaluation/TUNING.md, twenty-ninth round).
const TeachConfidence = 0.55

// The close-match rule of the seventh tuning round, which the default rule
// was before the decision model: a match substitutes when its description is
// close (cosine ≥ .67) and its hybrid score leads the second candidate's by
// 4.25, or when its score leads by 22. Runs started under it keep it
// (workflow version "default-substitute-rule" 1), and
// DefaultSubstituteThreshold is still the similarity of a close match: the
// bar an external definition needs when the run's rule has no threshold
// (workflows.DefaultThreshold).
const (
	DefaultSubstituteThreshold      = 0.67
	DefaultSubstituteScoreMargin    = 4.25
	DefaultSubstituteEvidenceMargin = 22
)

// DefaultSubstituteRule is the default rule as one value: the decision
// model's confidence at the default operating point.
func DefaultSubstituteRule() SubstituteRule {
	return SubstituteRule{Confidence: DefaultSubstituteConfidence}
}

// CloseMatchRule is the rule of the seventh tuning round (see the
// constants above), kept for runs started under it.
func CloseMatchRule() SubstituteRule {
	return SubstituteRule{Threshold: DefaultSubstituteThreshold, ScoreMargin: DefaultSubstituteScoreMargin,
		EvidenceMargin: DefaultSubstituteEvidenceMargin}
}

// SubstituteRule is the fulfilment decision a novel verb lives on: is the
// best candidate of a search a confident enough match to run in the verb's
// place, or does nothing fit (decompose, onboard or record a gap)?
// NovelVerbWorkflow decides with it, and `toolsmith eval --protocol
// leave-one-out` measures it, so the number measured is the behaviour
// shipped.
//
// Every bar that is set must hold: the decision model's confidence
// (Confidence), the similarity (Threshold) and the margins (Margin,
// ScoreMargin); a score lead of EvidenceMargin substitutes on its own. A
// zero field is off. Whatever the bars, a first candidate whose required
// parameters the verb's inputs cannot fill (Candidate.InputFit < 0), or
// that the deployment cannot run (Candidate.Unavailable), is not
// substituted: it could not run. Other candidates the inputs cannot fill
// are no alternative to the first, so the bars read the first against the
// candidates the inputs could fill (the inputs' fit is evidence the
// evaluation sets, which carry no inputs, cannot measure, so it enters the
// decision as this rule, not as a fitted weight); ChooseWith goes on to
// read the first candidate the inputs fill, as if it ranked first. A
// candidate the deployment cannot run stays a rival: what a deployment
// serves says nothing of what the verb means, so a tool served here is
// never read in place of a better match that is not. Likewise the confidence bar
// admits a close first candidate that alone provides the requested verb
// (Candidate.SameVerb; see soleProvider).
type SubstituteRule struct {
	// Confidence, when > 0, is the probability that the first candidate is
	// the right tool, by DefaultDecisionModel, it needs (the rule's
	// operating point: higher is more precise and refuses more).
	Confidence float64 `json:"confidence,omitempty"`
	// Threshold, when > 0, is the cosine similarity (the semantic signal's
	// raw value) the first candidate needs.
	Threshold float64 `json:"threshold,omitempty"`
	// Margin, when > 0, is how far the first candidate's similarity must
	// stand above every other candidate's: a near tie between two tools is
	// not a confident match.
	Margin float64 `json:"margin,omitempty"`
	// ScoreMargin, when > 0, is how far the first candidate's hybrid score
	// (every signal, usage evidence included) must stand above the
	// second's.
	ScoreMargin float64 `json:"scoreMargin,omitempty"`
	// EvidenceMargin, when > 0, is a lead of the first candidate's hybrid
	// score over the second's that substitutes on its own: with
	// DefaultWeights only the usage signals (past queries like this one
	// that the tool served, their neighbours, the query log) open a lead
	// this wide.
	EvidenceMargin float64 `json:"evidenceMargin,omitempty"`
}

// IsZero reports whether no field is set (the caller asked for no rule of
// its own, so the calibrated default applies).
func (r SubstituteRule) IsZero() bool { return r == SubstituteRule{} }

// Or completes r from def: a rule is set as a whole, so a zero r is def,
// and an r with neither a threshold nor a confidence takes def's (its unset
// margins stay off).
func (r SubstituteRule) Or(def SubstituteRule) SubstituteRule {
	switch {
	case r.IsZero():
		return def
	case r.Threshold == 0 && r.Confidence == 0:
		r.Threshold, r.Confidence = def.Threshold, def.Confidence
	}
	return r
}

// Candidate is what the rule reads of a search hit.
type Candidate struct {
	Similarity float64 `json:"similarity"` // the semantic signal's raw cosine
	Score      float64 `json:"score"`      // the hybrid ranking score
	// Keyword is the keyword (bm25) signal on its ranking scale (a z-score
	// over the candidates with DefaultWeights' normalisation).
	Keyword float64 `json:"keyword,omitempty"`
	// Subword is the subword (character n-gram) signal on its ranking
	// scale: high when the query names the tool.
	Subword float64 `json:"subword,omitempty"`
	// InputFit says whether the verb's inputs fill the tool's required
	// parameters (InputFit, InputFitValues): +1 they do, -1 one is missing
	// or of the wrong JSON type, 0 unknown (no inputs given, or the tool
	// has no required parameter for them to fill).
	InputFit int `json:"inputFit,omitempty"`
	// Misfit, when InputFit is -1, may say which required parameter the
	// inputs do not fill and why (InputFitValues' reason).
	Misfit string `json:"misfit,omitempty"`
	// Learned is the part of Score the usage signals added (the query's
	// past neighbours, the tool's usage centroid, the query log,
	// popularity, pairings, session history and success rate): Score −
	// Learned is what the query earned by its own words. 0 zero-shot.
	Learned float64 `json:"learned,omitempty"`
	// Unavailable says the deployment cannot run the tool (its module is
	// not routed here): it is never substituted, but unlike a tool the
	// inputs cannot fill it stays a rival to the others (the verb may mean
	// it), and no tool after it is read in its place.
	Unavailable bool `json:"unavailable,omitempty"`
	// SameVerb says the tool provides the very verb the request names
	// (CONVERT_CURRENCY asked, a tool that declares CONVERT_CURRENCY): the
	// planner's own words and the tool's own manifest agree.
	SameVerb bool `json:"sameVerb,omitempty"`
	// Record is the tool's record as a first candidate, learned from use
	// (Record.LogOdds): below 0 for a tool the search often puts first for
	// queries it did not serve; Recorded says it has one. A tool without a
	// record reads 0 and false, and the decision reads it as before records.
	Record   float64 `json:"record,omitempty"`
	Recorded bool    `json:"recorded,omitempty"`
}

// InputFit is Candidate.InputFit for a tool's required parameters and the
// names of the inputs a verb brings: 0 without inputs or without required
// parameters (nothing says the inputs are the tool's), else +1 when every
// required parameter has an input of its name (ignoring case and the
// separators '_', '-', '.' and space, as the module router maps inputs),
// -1 when one has none.
func InputFit(required, inputs []string) int {
	if len(inputs) == 0 || len(required) == 0 {
		return 0
	}
	have := make(map[string]bool, len(inputs))
	for _, n := range inputs {
		have[paramKey(n)] = true
	}
	for _, p := range required {
		if !have[paramKey(p)] {
			return -1
		}
	}
	return 1
}

// MissingInputs lists the required parameters (in their order) that no
// input of the verb fills, matched as InputFit matches them; with no
// inputs, every required parameter is missing.
func MissingInputs(required, inputs []string) []string {
	have := make(map[string]bool, len(inputs))
	for _, n := range inputs {
		have[paramKey(n)] = true
	}
	var missing []string
	for _, p := range required {
		if !have[paramKey(p)] {
			missing = append(missing, p)
		}
	}
	return missing
}

// Param is a tool's required parameter as InputFitValues reads it: its
// name and the JSON types its input schema gives it ("string", "number",
// "integer", "boolean", "object", "array", "null"); without types, any
// value fills it. Formats, patterns and ranges are the execution's to
// check: the fit reads JSON types only.
type Param struct {
	Name  string   `json:"name"`
	Types []string `json:"types,omitempty"`
}

// InputFitValues is InputFit reading the inputs' values too: a required
// parameter is filled by an input of its name (matched as InputFit matches
// it, an input of exactly its name first) whose JSON type is one of the
// parameter's Types ("three" does not fill a number, 2.5 does not fill an
// integer, 3.0 does). It is 0 without inputs or without required
// parameters, +1 when every required
// parameter is filled, and -1 with the reason for the first (in order)
// that is not: no input of its name, or an input of another JSON type.
// A parameter that two inputs match ignoring case and separators is left
// to the execution's mapping, as InputFit leaves it.
func InputFitValues(required []Param, inputs map[string]any) (int, string) {
	if len(inputs) == 0 || len(required) == 0 {
		return 0, ""
	}
	// Sorted names: the workflow calls this, and map order is random.
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	byKey := make(map[string][]string, len(names))
	for _, n := range names {
		byKey[paramKey(n)] = append(byKey[paramKey(n)], n)
	}
	for _, p := range required {
		name, exact := p.Name, true
		if _, ok := inputs[name]; !ok {
			exact = false
			switch m := byKey[paramKey(p.Name)]; len(m) {
			case 0:
				return -1, fmt.Sprintf("no input fills %s", p.Name)
			case 1:
				name = m[0]
			default:
				continue
			}
		}
		if len(p.Types) == 0 {
			continue
		}
		if got := jsonType(inputs[name]); got != "" && !typeFits(got, inputs[name], p.Types) {
			from := ""
			if !exact {
				from = fmt.Sprintf(" (input %s)", name)
			}
			return -1, fmt.Sprintf("%s%s is %s, the tool wants %s", p.Name, from, article(got), orList(p.Types))
		}
	}
	return 1, ""
}

// jsonType is the JSON type of a decoded input value ("number" for every
// number, integral or not), "" for a Go value JSON has no type for.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	default:
		switch reflect.ValueOf(v).Kind() {
		case reflect.Slice, reflect.Array:
			return "array"
		case reflect.Map, reflect.Struct:
			return "object"
		}
		return ""
	}
}

// typeFits reports whether a value of JSON type got fills a parameter of
// the types want: a number fills "number", and "integer" when it has no
// fractional part.
func typeFits(got string, v any, want []string) bool {
	for _, w := range want {
		switch {
		case w == got:
			return true
		case w == "integer" && got == "number" && integral(v):
			return true
		}
	}
	return false
}

// integral reports whether a number has no fractional part.
func integral(v any) bool {
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return true
		}
		x, err := v.Float64()
		if err != nil {
			return false
		}
		f = x
	default:
		return true // a Go integer
	}
	return !math.IsInf(f, 0) && f == math.Trunc(f)
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func orList(ts []string) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = article(t)
	}
	return strings.Join(out, " or ")
}

func paramKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// Candidate is what the rule reads of a ranked hit: its raw cosine, its
// hybrid score and its keyword signal. The workflow's searcher
// (activities.RetrievalSearcher) and the leave-one-out evaluation both read
// hits through it.
func (h Hit) Candidate() Candidate {
	return Candidate{Similarity: h.Breakdown.Semantic.Raw, Score: h.Score, Keyword: h.Breakdown.Keyword.Norm, Subword: h.Breakdown.Subword.Norm,
		Learned: h.Breakdown.Learned()}
}

// DecisionFeatures is how many features DecisionModel reads of a search
// without usage evidence (Features).
const DecisionFeatures = 7

// DecisionEvidenceFeatures is how many features DecisionModel reads of a
// search with usage evidence (EvidenceFeatures).
const DecisionEvidenceFeatures = DecisionFeatures + 6

// DecisionModel is a logistic model of "the first candidate is the right
// tool" over what a search knows of its candidates: the confidence the
// rule's Confidence bar applies to. It has two parts, one per regime. A
// search none of whose candidates carries usage evidence (zero-shot, or a
// query like nothing the deployment has served) is read by Bias and
// Weights over Features; a search where some candidate does is read by
// EvidenceBias and EvidenceWeights over EvidenceFeatures, which also say
// how much of the lead the usage signals opened. One bar serves both
// because EvidenceShift moves the second part's confidence to the same
// scale of precision as the first's (a log-odds shift, chosen after the
// fit). A model without the second part reads every search
// with the first.
type DecisionModel struct {
	Bias    float64                   `json:"bias"`
	Weights [DecisionFeatures]float64 `json:"weights"`
	// EvidenceBias and EvidenceWeights read searches with usage evidence.
	EvidenceBias    float64                           `json:"evidenceBias,omitempty"`
	EvidenceWeights [DecisionEvidenceFeatures]float64 `json:"evidenceWeights,omitzero"`
	// EvidenceShift is added to the second part's log-odds: with it, the
	// lowest bar at which substitutions are right at the target precision
	// is the same in both regimes.
	EvidenceShift float64 `json:"evidenceShift,omitempty"`
	// ZeroShotFloor, when > 0, is the similarity below which the zero-shot
	// part gives a first candidate no confidence at all. Its fit saw
	// catalogues of look-alikes, where a wide lead takes a close match; in a
	// small catalogue of unlike tools one shared word ("dollars") opens as
	// wide a lead for a verb that is nothing like the tool. With usage
	// evidence the evidence part reads the lead, so the floor stays off there.
	ZeroShotFloor float64 `json:"zeroShotFloor,omitempty"`
}

// hasEvidencePart reports whether m reads searches with usage evidence by
// a part of its own.
func (m DecisionModel) hasEvidencePart() bool {
	return m.EvidenceBias != 0 || m.EvidenceWeights != [DecisionEvidenceFeatures]float64{}
}

// DefaultDecisionModel is the model fitted with `toolsmith eval --protocol
// leave-one-out --fit-samples` on the "tune" part of the MetaTool dev
// split's three parts (`toolsmith eval split --tune-out …`), for the
// built-in USE-Lite embedder and DefaultWeights. Its zero-shot part is the
// fifteenth round's, fitted zero-shot on the tune part (refitted on the
// zero-shot regime alone it put a near tie of three look-alikes above the
// bar; evaluation/TUNING.md, seventeenth round). Its evidence part, the
// record's two weights included (EvidenceFeatures 11 and 12, twenty-third
// round), was refitted when the open usage gate came to reach only related
// tools (twenty-fifth round): on the tune part with the choose part's
// queries as history, and with that history for all but an eighth of the
// tools whose queries are scored (`--cold-tools 0.125`), pooled, all but
// "has a record" (DefaultRecordShift, kept); its EvidenceShift was then
// chosen on the choose part. A first without a record reads 0 for both
// record features. No query of the parts the
// operating point was chosen or reported on was fitted.
var DefaultDecisionModel = DecisionModel{
	Bias:         -2.563373,
	Weights:      [DecisionFeatures]float64{0.823007, 0.332488, 0.053115, 0.347034, 0.153414, 0.121634, 0.120512},
	EvidenceBias: -3.743185,
	EvidenceWeights: [DecisionEvidenceFeatures]float64{-0.708971, -0.140367, 0.103574, -0.157602, 0.162824, 0.057573, 0.818406,
		-0.127869, 0.151794, -0.457597, 0.070066,
		DefaultRecordWeight, DefaultRecordShift},
	EvidenceShift: DefaultEvidenceShift,
	// Chosen on the tune and choose parts, zero-shot: at .30 the default
	// bar's recall is unchanged on tune (.1791) and loses .0002 on choose
	// (evaluation/TUNING.md, twenty-first round).
	ZeroShotFloor: DefaultZeroShotFloor,
}

// DefaultEvidenceShift is DefaultDecisionModel's EvidenceShift. The
// twenty-fifth round chose RefitEvidenceShift, the largest shift (in steps
// of .025) at which, at the default bar, substitutions with dense history
// are right at the target precision (≥ .90, nothing fits ≥ .80) on the
// choose part, history from the tune part. The twenty-sixth round moved
// .175 of it onto "has a record" (DefaultRecordShift), which leaves every
// search whose first has a record as it was and reads one whose first has
// none, as before the retraining has learned any records, .175 less sure
// (evaluation/TUNING.md, twenty-sixth round).
const DefaultEvidenceShift = RefitEvidenceShift - NoRecordDiscount

// RefitEvidenceShift and RefitRecordShift are the evidence shift and the
// "has a record" weight the twenty-fifth round shipped. Workflow runs
// started before workflow change "decision-no-record" replay with them.
const (
	RefitEvidenceShift = -0.30
	RefitRecordShift   = 0.30
)

// NoRecordDiscount is how much less sure the evidence part reads a search
// whose first candidate has no record than the twenty-fifth round's model
// did: the smallest (in steps of .025) at which, with dense history and no
// records at all, substitutions on the choose part are right at the target
// precision at the default bar (.8930 before, .9010 at .175), while
// searches whose first has a record read exactly as before
// (evaluation/TUNING.md, twenty-sixth round).
const NoRecordDiscount = 0.175

// EarlierDecisionModel is DefaultDecisionModel as it was before the
// twenty-fifth round: the evidence part fitted (seventeenth round) and the
// record's weights chosen (twenty-third round) on the ranking whose open
// gate lifted every plausible candidate. Workflow runs started before the
// refit (workflow change "decision-evidence-refit") replay with its
// evidence part.
var EarlierDecisionModel = DecisionModel{
	Bias:         -2.563373,
	Weights:      [DecisionFeatures]float64{0.823007, 0.332488, 0.053115, 0.347034, 0.153414, 0.121634, 0.120512},
	EvidenceBias: -3.883175,
	EvidenceWeights: [DecisionEvidenceFeatures]float64{-1.063242, -0.278706, 0.109827, -0.026977, 0.096562, 0.086313, 0.670643,
		0, 0.310156, -0.462021, -0.181994, 0.562527, 0.30},
	EvidenceShift: 0.15,
	ZeroShotFloor: DefaultZeroShotFloor,
}

// DefaultZeroShotFloor is DefaultDecisionModel's ZeroShotFloor.
const DefaultZeroShotFloor = 0.30

// DefaultRecordWeight and DefaultRecordShift are DefaultDecisionModel's
// weights of the first candidate's record (EvidenceFeatures 11 and 12): a
// tool use found often first and wrong loses confidence (the weight,
// refitted with the rest of the evidence part in the twenty-fifth round),
// and any tool with a record gains the shift (chosen in the twenty-third
// round and kept: the refit would have made it a loss, and searches whose
// first has no record, as before the retraining has learned any, then
// read too sure: precision .871 and nothing fits .785 on the choose part;
// evaluation/TUNING.md, twenty-fifth round), with NoRecordDiscount added
// in the twenty-sixth round and taken off DefaultEvidenceShift.
const (
	DefaultRecordWeight = 0.940588
	DefaultRecordShift  = RefitRecordShift + NoRecordDiscount
)

// HasEvidence reports whether at least half the candidates, and at least
// half of a full search's FulfilmentCandidates, carry usage evidence
// (Candidate.Learned > 0): the search is read by the evidence part of the
// decision model, fitted where most candidates have served queries like
// this one. Where only a few have (a young deployment, a small catalogue,
// or a query near little of what was served), a used tool's lead is
// judged as a zero-shot lead is.
func HasEvidence(cands []Candidate) bool {
	n := 0
	for _, c := range cands {
		if c.Learned > evidenceEps {
			n++
		}
	}
	return n > 0 && 2*n >= max(len(cands), FulfilmentCandidates)
}

// evidenceEps is the least Learned that counts as usage evidence (below
// it, rounding).
const evidenceEps = 1e-9

// EvidenceFeatures are what DecisionModel reads of a search with usage
// evidence: Features, then
//
//	7 1 when the first candidate itself carries usage evidence;
//	8 the part of feature 1 (the log score lead) that the usage signals
//	  opened: feature 1 less the log of the first's lead by its own
//	  signals (Score − Learned) over the best other's;
//	9 1 when the candidate the query itself ranks best (by its own
//	  signals) is not the first and carries no usage evidence: a cold tool
//	  that look-alikes with history overtook;
//	10 1 when the first is not the candidate the query itself ranks best;
//	11 the first's record where it is below the record's average
//	  (min(Candidate.Record, 0)): use found the search often puts it
//	  first for queries it did not serve; 0 without a record;
//	12 1 when the first has a record (Candidate.Recorded).
//
// A record above the average is read as an average one: a tool's good
// record says nothing of queries for a look-alike nobody has used yet,
// and read as evidence it made such queries' wrong substitutions more
// confident (evaluation/TUNING.md, twenty-third round).
func EvidenceFeatures(cands []Candidate) [DecisionEvidenceFeatures]float64 {
	var f [DecisionEvidenceFeatures]float64
	base := Features(cands)
	copy(f[:], base[:])
	if len(cands) == 0 {
		return f
	}
	own := func(c Candidate) float64 { return c.Score - c.Learned }
	best := 0
	for i, c := range cands {
		if own(c) > own(cands[best]) {
			best = i
		}
	}
	if cands[0].Learned > evidenceEps {
		f[7] = 1
	}
	ownLead := 0.0 // a candidate alone leads by its own score
	if len(cands) > 1 {
		b := math.Inf(-1)
		for _, c := range cands[1:] {
			b = max(b, own(c))
		}
		ownLead = own(cands[0]) - b
	} else {
		ownLead = own(cands[0])
	}
	f[8] = base[1] - signedLog(ownLead)
	if cands[0].Recorded {
		f[11], f[12] = min(cands[0].Record, 0), 1
	}
	if best != 0 {
		f[10] = 1
		if cands[best].Learned <= evidenceEps {
			f[9] = 1
		}
	}
	return f
}

// signedLog is sign(x)·log(1 + |x|).
func signedLog(x float64) float64 {
	if x < 0 {
		return -math.Log1p(-x)
	}
	return math.Log1p(x)
}

// Features are what DecisionModel reads of candidates in ranking order
// (the first is the one that would run). Each is evidence for the first,
// so the fitted weights are positive and the confidence only grows with it:
//
//	0 the first's similarity;
//	1 log(1 + its score lead over the second), the lead usage evidence
//	  widens;
//	2 its score over the mean of the others';
//	3 1 when no other candidate is more similar (the semantic signal agrees
//	  with the ranking);
//	4 its keyword signal's lead over every other candidate;
//	5 its subword signal's lead over every other candidate (the query
//	  names the tool);
//	6 log(1 + its score lead over the third): is it alone, or one of a
//	  crowd of near-duplicates?
//
// A missing candidate counts as similarity, score and signals 0: nothing
// competes. Further features (the look-alikes among the candidates, the
// query's words in the name, the signals' agreement) were tried and left
// out: evaluation/TUNING.md, nineteenth round.
func Features(cands []Candidate) [DecisionFeatures]float64 {
	var f [DecisionFeatures]float64
	if len(cands) == 0 {
		return f
	}
	first, others := cands[0], cands[1:]
	lead := func(get func(Candidate) float64) float64 {
		b := 0.0
		for i, c := range others {
			if i == 0 || get(c) > b {
				b = get(c)
			}
		}
		return get(first) - b
	}
	score := func(i int) float64 {
		if i < len(cands) {
			return cands[i].Score
		}
		return 0
	}
	mean := 0.0
	for _, c := range others {
		mean += c.Score
	}
	if len(others) > 0 {
		mean /= float64(len(others))
	}
	f[0] = first.Similarity
	f[1] = math.Log1p(max(first.Score-score(1), 0))
	f[2] = first.Score - mean
	if lead(func(c Candidate) float64 { return c.Similarity }) >= 0 {
		f[3] = 1
	}
	f[4] = lead(func(c Candidate) float64 { return c.Keyword })
	f[5] = lead(func(c Candidate) float64 { return c.Subword })
	f[6] = math.Log1p(max(first.Score-score(2), 0))
	return f
}

// Confidence is the model's probability that the first of cands is the
// right tool (for a search with usage evidence, on the scale EvidenceShift
// aligns).
func (m DecisionModel) Confidence(cands []Candidate) float64 {
	if len(cands) == 0 {
		return 0
	}
	var z float64
	if m.hasEvidencePart() && HasEvidence(cands) {
		f := EvidenceFeatures(cands)
		z = m.EvidenceBias + m.EvidenceShift
		for i, w := range m.EvidenceWeights {
			z += w * f[i]
		}
	} else {
		if m.ZeroShotFloor > 0 && cands[0].Similarity < m.ZeroShotFloor {
			return 0
		}
		f := Features(cands)
		z = m.Bias
		for i, w := range m.Weights {
			z += w * f[i]
		}
	}
	return 1 / (1 + math.Exp(-z))
}

// Substitute decides on the candidates, in ranking order (the first is the
// one that would run), with DefaultDecisionModel.
func (r SubstituteRule) Substitute(cands []Candidate) bool {
	return r.verdict(DefaultDecisionModel, cands).ok
}

// SubstituteWith is Substitute with another decision model (the evaluation
// measures a model it has just fitted with it).
func (r SubstituteRule) SubstituteWith(m DecisionModel, cands []Candidate) bool {
	return r.verdict(m, cands).ok
}

// Decide is Substitute with the reason, for the workflow's record: which
// bars held, or which one the first candidate missed.
func (r SubstituteRule) Decide(cands []Candidate) (bool, string) {
	return r.DecideWith(DefaultDecisionModel, cands)
}

// DecideWith is Decide with the decision model m (a workflow replaying a
// run started under an earlier model passes that one).
func (r SubstituteRule) DecideWith(m DecisionModel, cands []Candidate) (bool, string) {
	v := r.verdict(m, cands)
	var why string
	switch v.kind {
	case noCandidates:
		why = "no candidates"
	case inputsMissing:
		why = "the inputs do not fill the tool's required parameters"
		if cands[0].Misfit != "" {
			why += " (" + cands[0].Misfit + ")"
		}
	case unavailable:
		why = UnavailableReason
	case byEvidence:
		why = fmt.Sprintf("score lead %.2f ≥ evidence margin %.2f", v.lead, r.EvidenceMargin)
	case byVerb:
		why = fmt.Sprintf("confidence %.3f < %.3f, but it ranks first, is close (similarity %.3f) and is the only candidate that provides the verb itself", v.conf, r.Confidence, cands[0].Similarity)
	case lowConfidence:
		why = fmt.Sprintf("confidence %.3f < %.3f (similarity %.3f, score lead %.2f)", v.conf, r.Confidence, cands[0].Similarity, v.lead)
		if m.ZeroShotFloor > 0 && cands[0].Similarity < m.ZeroShotFloor && !HasEvidence(cands) {
			why = fmt.Sprintf("similarity %.3f is below %.2f, under which a search without usage evidence never substitutes, whatever its score lead",
				cands[0].Similarity, m.ZeroShotFloor)
		}
	case belowThreshold:
		why = fmt.Sprintf("similarity %.3f < threshold %.3f", cands[0].Similarity, r.Threshold)
	case nearSimilarity:
		why = fmt.Sprintf("similarity %.3f leads another candidate by %.3f < margin %.3f", cands[0].Similarity, v.gap, r.Margin)
	case nearScore:
		why = fmt.Sprintf("similarity %.3f but score lead %.2f < score margin %.2f", cands[0].Similarity, v.lead, r.ScoreMargin)
	default:
		var held []string
		if r.Confidence > 0 {
			held = append(held, fmt.Sprintf("confidence %.3f ≥ %.3f", v.conf, r.Confidence))
		}
		if r.Threshold > 0 {
			held = append(held, fmt.Sprintf("similarity %.3f ≥ threshold %.3f", cands[0].Similarity, r.Threshold))
		}
		if r.ScoreMargin > 0 && len(cands) > 1 {
			held = append(held, fmt.Sprintf("score lead %.2f ≥ %.2f", v.lead, r.ScoreMargin))
		}
		if len(held) == 0 {
			held = append(held, fmt.Sprintf("similarity %.3f, no bar set", cands[0].Similarity))
		}
		if cands[0].InputFit > 0 {
			held = append(held, "the inputs fill its required parameters")
		}
		why = strings.Join(held, ", ")
	}
	return v.ok, why
}

// Choice is the rule's decision read from the first candidate that could
// run (ChooseWith).
type Choice struct {
	// Pick is the candidate to substitute (an index of the candidates), -1
	// for none.
	Pick int
	// Read is the candidate the bars read: the first, or the first that
	// could run when the first could not.
	Read int
	// Why is the decision's reason for Read: which bars held, or which one
	// it missed.
	Why string
	// Skipped, when Read > 0, is why the first could not run.
	Skipped string
}

// ChooseWith is DecideWith read from the first candidate that could run.
// Where the first could (or no candidate says whether the inputs fill it:
// no inputs, InputFit 0), it is DecideWith on cands, Read 0. Where the
// inputs do not fill the first, the first candidate they fill is read as
// the first, against the candidates after it the inputs could fill too:
// the ones before it could not run in the verb's place, so they are no
// alternative to it, as the candidates after a first that the inputs do
// not fill are none. A candidate the deployment cannot run is different:
// the inputs say which of the tools like the query the verb means, while
// what this deployment serves says nothing of it, so when such a candidate
// comes first (or before the first the inputs fill) nothing after it is
// read in its place, and after the one read it stays a rival (a served
// tool among many unserved look-alikes does not lead by default). Every bar applies to it as it would if it ranked
// first: its similarity, its lead over the next candidate that could run,
// the decision model's confidence in it, the zero-shot floor. A first
// that could not run ranks where it does because the query is like it,
// not like the one read; that one must be a confident match on its own,
// or nothing is substituted. And the inputs must fill it (InputFit +1:
// it has required parameters and every one is filled): a tool that takes
// none (a currency list below a conversion the inputs could not fill) is
// "filled" by any inputs and leads only the tools after it, which says
// nothing of the verb, so it is never read in the first's place.
func (r SubstituteRule) ChooseWith(m DecisionModel, cands []Candidate) Choice {
	ok, why := r.DecideWith(m, cands)
	if ok {
		return Choice{Pick: 0, Why: why}
	}
	k := slices.IndexFunc(cands, func(c Candidate) bool { return !unfilled(c) })
	if len(cands) == 0 || !unfilled(cands[0]) || k < 0 || cands[k].InputFit <= 0 || cands[k].Unavailable {
		return Choice{Pick: -1, Why: why}
	}
	ok, runWhy := r.DecideWith(m, runnable(cands[k:]))
	c := Choice{Pick: -1, Read: k, Why: runWhy, Skipped: why}
	if ok {
		c.Pick = k
	}
	return c
}

// UnavailableReason is why a candidate this deployment cannot run is not
// substituted.
const UnavailableReason = "this deployment cannot run the tool (no module served here runs it)"

// The outcomes of a decision.
const (
	closeMatch = iota
	noCandidates
	inputsMissing
	byEvidence
	lowConfidence
	belowThreshold
	nearSimilarity
	nearScore
	byVerb
	unavailable
)

type verdict struct {
	ok        bool
	kind      int
	lead, gap float64 // score lead over the second; smallest similarity gap
	conf      float64 // the decision model's confidence, when the rule reads it
}

// runnable is cands without the candidates after the first that the
// verb's inputs cannot fill (InputFit < 0): they could not run in its
// place, so they are no alternative to it, and the rule weighs the first
// against the candidates the inputs could fill. A candidate this
// deployment cannot run (Unavailable) stays: the verb may mean it, so it
// is a rival all the same. Without inputs it is cands.
func runnable(cands []Candidate) []Candidate {
	if !slices.ContainsFunc(cands[1:], unfilled) {
		return cands
	}
	return slices.DeleteFunc(slices.Clone(cands), unfilled)
}

// unfilled reports a candidate whose required parameters the verb's inputs
// cannot fill.
func unfilled(c Candidate) bool { return c.InputFit < 0 }

// soleProvider reports whether the ranking's first is a close match
// (similarity ≥ DefaultSubstituteThreshold) that provides the requested verb
// itself, and no other runnable candidate does. The confidence bar admits
// it: the manifest says what the planner asked for, so look-alikes (a more
// similar description among thousands of tools) do not hold it back, while
// two tools that provide the verb (a seat and a table both
// MAKE_RESERVATION) are left to the model. The evaluation sets carry no
// verbs, so this enters as a rule, like the inputs' fit.
func soleProvider(cands []Candidate) bool {
	first := cands[0]
	return first.SameVerb && first.Similarity >= DefaultSubstituteThreshold &&
		!slices.ContainsFunc(cands[1:], func(c Candidate) bool { return c.SameVerb })
}

// verdict is the decision without formatting (the eval's curve applies it
// to every query under many rules).
func (r SubstituteRule) verdict(m DecisionModel, cands []Candidate) verdict {
	if len(cands) == 0 {
		return verdict{kind: noCandidates}
	}
	first := cands[0]
	if first.Unavailable {
		return verdict{kind: unavailable}
	}
	if first.InputFit < 0 {
		return verdict{kind: inputsMissing}
	}
	cands = runnable(cands)
	lead, hasLead := 0.0, len(cands) > 1
	if hasLead {
		lead = first.Score - cands[1].Score
		if r.EvidenceMargin > 0 && lead >= r.EvidenceMargin {
			return verdict{ok: true, kind: byEvidence, lead: lead}
		}
	}
	var conf float64
	if r.Confidence > 0 {
		conf = m.Confidence(cands)
		if conf < r.Confidence {
			if soleProvider(cands) {
				return verdict{ok: true, kind: byVerb, lead: lead, conf: conf}
			}
			return verdict{kind: lowConfidence, lead: lead, conf: conf}
		}
	}
	if first.Similarity < r.Threshold {
		return verdict{kind: belowThreshold, lead: lead, conf: conf}
	}
	if r.Margin > 0 {
		for _, c := range cands[1:] {
			if d := first.Similarity - c.Similarity; d < r.Margin {
				return verdict{kind: nearSimilarity, lead: lead, gap: d, conf: conf}
			}
		}
	}
	if r.ScoreMargin > 0 && hasLead && lead < r.ScoreMargin {
		return verdict{kind: nearScore, lead: lead, conf: conf}
	}
	return verdict{ok: true, kind: closeMatch, lead: lead, conf: conf}
}

// Learned is what the signals learned from use (usage centroid,
// neighbours, query log, popularity, pairings) added to the hit's score:
// 0 for a tool that has served nothing like the query. The success rate
// is left out (every tool has its prior) and so is the session's history
// (a fulfilment search has no session).
func (b Breakdown) Learned() float64 {
	return b.Usage.Weighted + b.Neighbours.Weighted + b.QueryLog.Weighted + b.Popularity.Weighted + b.Pairing.Weighted
}
