package workflows

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// withSchemaParams gives the fixture's tools the required and optional
// parameters of their input schemas, as registration does (the fixture's
// summaries have none), before their hits are scripted.
func withSchemaParams(t *testing.T, f *workflowstest.Fixture, ids ...string) {
	t.Helper()
	for _, id := range ids {
		tl, ok := f.Tools[id]
		if !ok {
			t.Fatalf("no tool %s in the fixture", id)
		}
		var m tool.Manifest
		if err := json.Unmarshal(tl.Manifest, &m); err != nil {
			t.Fatal(err)
		}
		tl.RequiredParams, tl.OptionalParams = tool.Params(m.InputSchema)
		f.Tools[id] = tl
	}
}

// addHistoricalRate registers a tool that provides GET_HISTORICAL_RATE,
// with a date and two currencies required.
func addHistoricalRate(f *workflowstest.Fixture) {
	f.AddTool(tool.Manifest{ToolID: "currency.historical_rate", Verb: "GET_HISTORICAL_RATE", Name: "Historical rate",
		ShortDescription: "The exchange rate between two currencies on a past date", Module: "currency",
		InputSchema: json.RawMessage(`{"type":"object","required":["date","from","to"],"properties":{
			"date":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"}}}`)})
}

func historicalInputs() map[string]any {
	return map[string]any{"date": "2026-10-01", "from": "EUR", "to": "USD"}
}

// rateSearch scripts "get historical rate": currency.rates first (the
// inputs do not fill its base), then the historical rate at second's
// similarity and score, then two tools far behind.
func rateSearch(t *testing.T, f *workflowstest.Fixture, second retrieval.Candidate) {
	addHistoricalRate(f)
	withSchemaParams(t, f, "currency.rates", "currency.historical_rate", "units.convert", "text.stats")
	const words = "get historical rate"
	f.RankedHit(words, "currency.rates", retrieval.Candidate{Similarity: 0.8, Score: 32.7, Keyword: 3})
	f.RankedHit(words, "currency.historical_rate", second)
	f.RankedHit(words, "units.convert", retrieval.Candidate{Similarity: 0.42, Score: 6.5})
	f.RankedHit(words, "text.stats", retrieval.Candidate{Similarity: 0.3, Score: 5})
}

// TestRunnableSecondSubstitutes: the search's first cannot run (the
// inputs do not fill its parameters), the second fits them and provides
// the very verb asked: the second is read as the first and substituted.
func TestRunnableSecondSubstitutes(t *testing.T) {
	f := workflowstest.New(t, nil)
	rateSearch(t, f, retrieval.Candidate{Similarity: 0.78, Score: 30, Keyword: 2.5})
	// A dry run: the demo module serves no historical rate, and the
	// substitution maps and validates the inputs against its schema.
	res, _, err := run(t, f, NovelVerbInput{Verb: "GET_HISTORICAL_RATE", Description: "euro dollar rate on 1 October",
		Inputs: historicalInputs(), Options: NovelVerbOptions{DryRun: true}})
	if err != nil {
		t.Fatalf("%v (%s)", err, res.Reason)
	}
	if res.Branch != BranchSubstitute || !slices.Equal(res.Tools, []string{"currency.historical_rate"}) {
		t.Fatalf("branch %q tools %v (%s), want currency.historical_rate substituted", res.Branch, res.Tools, res.Reason)
	}
	t.Logf("reason: %s", res.Reason)
	for _, want := range []string{"matches currency.historical_rate", "confidence", "currency.rates ranks first but could not", "required parameters (no input fills base)"} {
		if !strings.Contains(res.Reason, want) {
			t.Fatalf("reason %q lacks %q", res.Reason, want)
		}
	}

	// A second that runs for real: currency.convert behind currency.rates
	// for a verb neither provides.
	f = workflowstest.New(t, nil)
	withSchemaParams(t, f, "currency.rates", "currency.convert", "units.convert")
	f.RankedHit("exchange money", "currency.rates", retrieval.Candidate{Similarity: 0.8, Score: 32.7, Keyword: 3})
	f.RankedHit("exchange money", "currency.convert", retrieval.Candidate{Similarity: 0.78, Score: 30, Keyword: 2.5})
	f.RankedHit("exchange money", "units.convert", retrieval.Candidate{Similarity: 0.42, Score: 6.5})
	res, _, err = run(t, f, NovelVerbInput{Verb: "EXCHANGE_MONEY", Description: "change my dollars into euros", Inputs: eurInputs()})
	if err != nil {
		t.Fatalf("%v (%s)", err, res.Reason)
	}
	if res.Branch != BranchSubstitute || !slices.Equal(res.Tools, []string{"currency.convert"}) || f.Mods["currency"].Executions("") != 1 {
		t.Fatalf("branch %q tools %v (%s), want currency.convert run", res.Branch, res.Tools, res.Reason)
	}
}

// TestWeakRunnableSecondIsNotSubstituted: behind a first that cannot run,
// a second that fits the inputs but is no confident match of its own (far
// from the query: similarity .45, a score far under the first's) is not
// substituted: the run goes on as if nothing fit, and says why of both.
func TestWeakRunnableSecondIsNotSubstituted(t *testing.T) {
	f := workflowstest.New(t, nil)
	rateSearch(t, f, retrieval.Candidate{Similarity: 0.45, Score: 7})
	res, _, err := run(t, f, NovelVerbInput{Verb: "GET_HISTORICAL_RATE", Description: "euro dollar rate on 1 October",
		Inputs: historicalInputs(), Options: NovelVerbOptions{DryRun: true}})
	wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
	if res.Branch != BranchDecompose || len(res.Tools) != 0 {
		t.Fatalf("branch %q tools %v (%s), want nothing substituted", res.Branch, res.Tools, res.Reason)
	}
	t.Logf("reason: %s", res.Reason)
	for _, want := range []string{"best currency.rates", "required parameters", "the first candidate that could run, currency.historical_rate", "confidence"} {
		if !strings.Contains(res.Reason, want) {
			t.Fatalf("reason %q lacks %q", res.Reason, want)
		}
	}
}

// TestWrongTypeDoesNotFill: an input of another JSON type than the one the
// tool's schema gives its required parameter does not fill it, so a clear
// match is not substituted (it would fail on the schema), and the reason
// names the parameter and the type; the right type substitutes.
func TestWrongTypeDoesNotFill(t *testing.T) {
	for _, tc := range []struct {
		amount any
		sub    bool
	}{{"three", false}, {3, true}} {
		f := workflowstest.New(t, nil)
		withSchemaParams(t, f, "currency.convert")
		f.ClearHit("exchange money", "currency.convert")
		res, _, err := run(t, f, NovelVerbInput{Verb: "EXCHANGE_MONEY", Inputs: map[string]any{"amount": tc.amount, "from": "USD", "to": "EUR"}})
		if tc.sub {
			if err != nil || res.Branch != BranchSubstitute {
				t.Fatalf("amount %v: branch %q err %v (%s), want substitute", tc.amount, res.Branch, err, res.Reason)
			}
			continue
		}
		wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
		if res.Branch != BranchDecompose || f.Mods["currency"].Executions("") != 0 || !strings.Contains(res.Reason, "amount is a string, the tool wants a number") {
			t.Fatalf("amount %v: branch %q (%s), want no substitution naming amount and number", tc.amount, res.Branch, res.Reason)
		}
	}
}

// TestRunsBeforeTheChangesReplay: a run started before the change ids
// "decision-runnable-first" and "decision-input-types" decides as it did:
// a first that cannot run refuses the substitution, and an input fills by
// its name whatever its type.
func TestRunsBeforeTheChangesReplay(t *testing.T) {
	before := func(id string) func(*testsuite.TestWorkflowEnvironment) {
		return func(env *testsuite.TestWorkflowEnvironment) {
			env.OnGetVersion(id, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		}
	}
	f := workflowstest.New(t, nil)
	rateSearch(t, f, retrieval.Candidate{Similarity: 0.78, Score: 30, Keyword: 2.5})
	res, _, err := runWith(t, f, NovelVerbInput{Verb: "GET_HISTORICAL_RATE", Description: "euro dollar rate on 1 October",
		Inputs: historicalInputs(), Options: NovelVerbOptions{DryRun: true}}, before("decision-runnable-first"))
	wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
	if res.Branch != BranchDecompose || strings.Contains(res.Reason, "historical_rate") {
		t.Fatalf("branch %q (%s), want the first alone read and refused", res.Branch, res.Reason)
	}

	f = workflowstest.New(t, nil)
	withSchemaParams(t, f, "currency.convert")
	f.ClearHit("exchange money", "currency.convert")
	res, _, err = runWith(t, f, NovelVerbInput{Verb: "EXCHANGE_MONEY", Inputs: map[string]any{"amount": "three", "from": "USD", "to": "EUR"}},
		before("decision-input-types"))
	wantType(t, err, activities.ErrTypeSchemaMismatch) // substituted, and the execution refused the type
	if res.Branch != BranchSubstitute {
		t.Fatalf("branch %q (%s), want the substitution by names alone", res.Branch, res.Reason)
	}
}

// TestRunsBeforeTheEvidenceRefitReplay: a search with usage evidence that
// the refitted evidence part takes above the bar and the earlier part
// below it substitutes from "decision-evidence-refit" 1 on, and a run
// started before the change replays refusing it.
func TestRunsBeforeTheEvidenceRefitReplay(t *testing.T) {
	search := func() *workflowstest.Fixture {
		return evidenceSearch(t, retrieval.Candidate{Similarity: 0.7, Score: 25, Keyword: 2, Learned: 0.5, Recorded: true})
	}
	in := NovelVerbInput{Verb: "EXCHANGE_MONEY", Inputs: map[string]any{"amount": 3, "from": "USD", "to": "EUR"}, Options: NovelVerbOptions{DryRun: true}}
	res, _, _ := run(t, search(), in)
	if res.Branch == BranchDecompose {
		t.Fatalf("branch %q (%s), want currency.convert substituted by the refitted part", res.Branch, res.Reason)
	}
	res, _, err := runWith(t, search(), in, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnGetVersion("decision-evidence-refit", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	})
	wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
	if res.Branch != BranchDecompose {
		t.Fatalf("branch %q (%s), want the earlier part's refusal", res.Branch, res.Reason)
	}
}

// TestRunsBeforeTheNoRecordDiscountReplay: with usage evidence, a first
// without a record that the twenty-fifth round's model took just above
// the bar reads NoRecordDiscount less sure from "decision-no-record" 1 on
// and is refused; a run started before the change replays substituting it.
func TestRunsBeforeTheNoRecordDiscountReplay(t *testing.T) {
	search := func() *workflowstest.Fixture {
		return evidenceSearch(t, retrieval.Candidate{Similarity: 0.7, Score: 26, Keyword: 2, Learned: 0.5})
	}
	in := NovelVerbInput{Verb: "EXCHANGE_MONEY", Inputs: map[string]any{"amount": 3, "from": "USD", "to": "EUR"}, Options: NovelVerbOptions{DryRun: true}}
	res, _, err := run(t, search(), in)
	wantType(t, err, activities.ErrTypeLLMUnavailable) // decomposition was tried
	if res.Branch != BranchDecompose {
		t.Fatalf("branch %q (%s), want a first without a record refused", res.Branch, res.Reason)
	}
	res, _, _ = runWith(t, search(), in, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnGetVersion("decision-no-record", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	})
	if res.Branch == BranchDecompose {
		t.Fatalf("branch %q (%s), want the refit's substitution replayed", res.Branch, res.Reason)
	}
}

// TestForcedSubstitutionTeachesNoSearch: a substitution that only the
// caller's own bar makes (options.confidence far under the default) runs,
// but its use is recorded without the verb's text, so the caller cannot
// teach everyone's searches by forcing it; one the default rule makes as
// well (the same caller's bar, a confident match) teaches as ever, and a
// run started before workflow change "substitute-teaches-default" replays
// teaching.
func TestForcedSubstitutionTeachesNoSearch(t *testing.T) {
	search := func(score float64) *workflowstest.Fixture {
		f := workflowstest.New(t, nil)
		addHistoricalRate(f)
		const words = "book table"
		f.RankedHit(words, "currency.convert", retrieval.Candidate{Similarity: 0.4, Score: score, Keyword: 0.5})
		f.RankedHit(words, "currency.rates", retrieval.Candidate{Similarity: 0.38, Score: 5})
		f.RankedHit(words, "units.convert", retrieval.Candidate{Similarity: 0.3, Score: 4})
		return f
	}
	in := NovelVerbInput{Verb: "BOOK_TABLE", Description: "for two", Inputs: map[string]any{"amount": 3, "from": "USD", "to": "EUR"},
		Options: NovelVerbOptions{Confidence: 0.01}, Caller: Caller{UserID: "ana", Level: "user"}}
	query := activities.VerbQuery(in.Verb, in.Description)

	f := search(5.5)
	res, _, err := run(t, f, in)
	if err != nil || res.Branch != BranchSubstitute {
		t.Fatalf("branch %q (%s) %v, want the caller's bar to substitute", res.Branch, res.Reason, err)
	}
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].ToolID != "currency.convert" || ev[0].Query != "" || !strings.Contains(res.Reason, "teaches no search") {
		t.Fatalf("usage %+v, reason %q: want one use without the verb's text, said so", ev, res.Reason)
	}

	f = search(5.5)
	_, _, _ = runWith(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnGetVersion("substitute-teaches-default", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
		env.OnGetVersion("substitute-teaches-confident", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	})
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].Query != query {
		t.Fatalf("replayed before the change: usage %+v, want the verb's text", ev)
	}

	// A confident match: the default rule substitutes it too.
	f = search(40)
	res, _, err = run(t, f, in)
	if err != nil || res.Branch != BranchSubstitute || strings.Contains(res.Reason, "teaches no search") {
		t.Fatalf("branch %q (%s) %v", res.Branch, res.Reason, err)
	}
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].Query != query {
		t.Fatalf("a substitution the default rule makes too: usage %+v, want the verb's text", ev)
	}
}

// TestWeakMatchSubstitutionTeachesNoSearch: a substitution that usage
// evidence carried past a weak match (the verb's text less like the tool
// than retrieval.ReportFloor) runs, but its use is recorded without the
// verb's text, so it is no evidence for the next such verb.
func TestWeakMatchSubstitutionTeachesNoSearch(t *testing.T) {
	search := func(sim float64) *workflowstest.Fixture {
		f := workflowstest.New(t, nil)
		addHistoricalRate(f)
		const words = "pay bill"
		f.RankedHit(words, "currency.convert", retrieval.Candidate{Similarity: sim, Score: 40, Keyword: 2, Learned: 20, Recorded: true})
		f.RankedHit(words, "currency.rates", retrieval.Candidate{Similarity: 0.2, Score: 6, Keyword: 0.5, Learned: 1})
		f.RankedHit(words, "currency.historical_rate", retrieval.Candidate{Similarity: 0.2, Score: 5, Learned: 1})
		f.RankedHit(words, "units.convert", retrieval.Candidate{Similarity: 0.2, Score: 4, Learned: 1})
		f.RankedHit(words, "text.stats", retrieval.Candidate{Similarity: 0.15, Score: 3, Learned: 1})
		return f
	}
	in := NovelVerbInput{Verb: "PAY_BILL", Description: "water bill", Inputs: map[string]any{"amount": 40, "from": "USD", "to": "USD"},
		Caller: Caller{UserID: "ana", Level: "user"}}
	f := search(0.25)
	res, _, err := run(t, f, in)
	if err != nil || res.Branch != BranchSubstitute {
		t.Fatalf("branch %q (%s) %v, want the evidence to substitute", res.Branch, res.Reason, err)
	}
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].Query != "" || !strings.Contains(res.Reason, "teaches no search") {
		t.Fatalf("usage %+v, reason %q: want one use without the verb's text", ev, res.Reason)
	}
	// A match like the verb teaches as ever.
	f = search(0.45)
	res, _, err = run(t, f, in)
	if err != nil || res.Branch != BranchSubstitute {
		t.Fatalf("branch %q (%s) %v", res.Branch, res.Reason, err)
	}
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].Query != activities.VerbQuery(in.Verb, in.Description) {
		t.Fatalf("usage %+v: want the verb's text taught", ev)
	}
}

// evidenceSearch is a fixture whose search for "exchange money" finds
// currency.convert first (as given), then four candidates that
// carry usage evidence: a search the decision's evidence part reads.
func evidenceSearch(t *testing.T, first retrieval.Candidate) *workflowstest.Fixture {
	f := workflowstest.New(t, nil)
	addHistoricalRate(f)
	const words = "exchange money"
	f.RankedHit(words, "currency.convert", first)
	f.RankedHit(words, "currency.rates", retrieval.Candidate{Similarity: 0.5, Score: 6, Keyword: 0.5, Learned: 1})
	f.RankedHit(words, "currency.historical_rate", retrieval.Candidate{Similarity: 0.45, Score: 5, Learned: 1})
	f.RankedHit(words, "units.convert", retrieval.Candidate{Similarity: 0.4, Score: 4, Learned: 1})
	f.RankedHit(words, "text.stats", retrieval.Candidate{Similarity: 0.35, Score: 3, Learned: 1})
	return f
}

// TestUnsureSubstitutionTeachesNoSearch: a substitution the default rule
// makes but below retrieval.TeachConfidence runs and counts as a use, and
// its use is recorded without the verb's text (the service does not learn
// from its own unsure choices); a sure one teaches. The scores sweep the
// first candidate's lead, so both sides of the bar are crossed.
func TestUnsureSubstitutionTeachesNoSearch(t *testing.T) {
	in := NovelVerbInput{Verb: "EXCHANGE_MONEY", Description: "dollars for my trip", Inputs: eurInputs(), Caller: Caller{UserID: "ana", Level: "user"}}
	confRe := regexp.MustCompile(`confidence (0\.\d+) ≥`)
	var unsure, sure int
	for _, score := range []float64{6, 7, 8, 9, 10, 12, 14, 17, 20, 25, 30} {
		f := workflowstest.New(t, nil)
		const words = "exchange money"
		f.RankedHit(words, "currency.convert", retrieval.Candidate{Similarity: 0.5, Score: score, Keyword: 1})
		f.RankedHit(words, "currency.rates", retrieval.Candidate{Similarity: 0.42, Score: 5})
		f.RankedHit(words, "units.convert", retrieval.Candidate{Similarity: 0.3, Score: 4})
		res, _, err := run(t, f, in)
		if err != nil || res.Branch != BranchSubstitute {
			continue // below the default bar: nothing runs
		}
		m := confRe.FindStringSubmatch(res.Reason)
		if m == nil {
			t.Fatalf("score %g: reason %q names no confidence", score, res.Reason)
		}
		conf, _ := strconv.ParseFloat(m[1], 64)
		ev := f.Usage.Events
		if len(ev) != 1 || !ev[0].Success {
			t.Fatalf("score %g: usage %+v, want one successful use", score, ev)
		}
		taught := ev[0].Query != ""
		switch {
		case conf < retrieval.TeachConfidence && (taught || !strings.Contains(res.Reason, "not sure enough")):
			t.Fatalf("score %g: confidence %.3f taught %v (%s); want no text, said so", score, conf, taught, res.Reason)
		case conf >= retrieval.TeachConfidence && !taught:
			t.Fatalf("score %g: confidence %.3f did not teach (%s)", score, conf, res.Reason)
		case conf < retrieval.TeachConfidence:
			unsure++
		default:
			sure++
		}
	}
	if unsure == 0 || sure == 0 {
		t.Fatalf("the sweep crossed the bar %d times below and %d above; want both", unsure, sure)
	}
}
