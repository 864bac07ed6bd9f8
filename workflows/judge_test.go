package workflows

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/llm"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// clearMatch scripts a search the default rule substitutes: currency.convert
// close and far ahead, then units.convert (whose required parameters the
// currency inputs cannot fill) and three weak others.
func clearMatch(f *workflowstest.Fixture) {
	u := f.Tools["units.convert"]
	u.RequiredParams = []string{"value", "from_unit", "to_unit"}
	f.Tools["units.convert"] = u
	f.ClearHit("convert currency", "currency.convert")
	f.RankedHit("convert currency", "units.convert", retrieval.Candidate{Similarity: 0.41, Score: 2, Keyword: -0.5})
	for i, id := range []string{"currency.rates", "timezone.convert_time", "text.stats"} {
		f.RankedHit("convert currency", id, retrieval.Candidate{Similarity: 0.3 - 0.05*float64(i), Score: 1.5 - 0.5*float64(i)})
	}
}

func judging(f *workflowstest.Fixture, verb, answer string) *workflowstest.ScriptedLLM {
	l := &workflowstest.ScriptedLLM{Judgements: map[string]string{verb: answer},
		Answers: map[string]string{verb: `{"steps":[],"reason":"no known verb does this"}`}}
	f.LLM = l
	return l
}

func TestJudgeConfirms(t *testing.T) {
	f := workflowstest.New(t, nil)
	clearMatch(f)
	l := judging(f, "CONVERT_CURRENCY", `{"tool":"currency.convert","reason":"it converts money between currencies"}`)
	res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs()})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Judge
	if res.Branch != BranchSubstitute || !slices.Equal(res.Tools, []string{"currency.convert"}) || j == nil ||
		j.DecidedBy != DecidedByModel || j.Verdict != VerdictConfirm || j.RulePick != "currency.convert" || j.Reason != "it converts money between currencies" {
		t.Fatalf("branch %q tools %v judge %+v; want a confirmed substitution", res.Branch, res.Tools, j)
	}
	// units.convert needs value/from_unit/to_unit, which the inputs cannot
	// fill: it is no alternative and is not offered; the top three others are.
	if !slices.Equal(j.Offered, []string{"currency.convert", "currency.rates", "timezone.convert_time"}) || !slices.Equal(l.Judged, []string{"CONVERT_CURRENCY"}) {
		t.Fatalf("offered %v, judged %v", j.Offered, l.Judged)
	}
	if !strings.Contains(res.Reason, "the model confirmed") {
		t.Fatalf("reason %q", res.Reason)
	}
}

func TestJudgeVetoes(t *testing.T) {
	f := workflowstest.New(t, nil)
	clearMatch(f)
	judging(f, "CONVERT_CURRENCY", `{"tool":"none","reason":"the caller wants a different currency service"}`)
	res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchNoCapability || len(res.Tools) != 0 || f.Mods["currency"].Executions("") != 0 {
		t.Fatalf("branch %q tools %v; want the veto to stop the substitution", res.Branch, res.Tools)
	}
	if j := res.Judge; j.DecidedBy != DecidedByModel || j.Verdict != VerdictVeto || j.ModelPick != llm.JudgeNone || j.RulePick != "currency.convert" {
		t.Fatalf("judge %+v", j)
	}
}

func TestJudgePicksAnother(t *testing.T) {
	f := workflowstest.New(t, nil)
	// An undecided ranking: the rule substitutes nothing.
	f.RankedHit("change money", "currency.rates", retrieval.Candidate{Similarity: 0.46, Score: 1.2})
	f.RankedHit("change money", "currency.convert", retrieval.Candidate{Similarity: 0.45, Score: 1.1})
	f.RankedHit("change money", "timezone.convert_time", retrieval.Candidate{Similarity: 0.30, Score: 0.4})
	f.RankedHit("change money", "text.stats", retrieval.Candidate{Similarity: 0.20, Score: 0.1})
	judging(f, "CHANGE_MONEY", `{"tool":"currency.convert","reason":"changing money is converting it"}`)
	res, _, err := run(t, f, NovelVerbInput{Verb: "CHANGE_MONEY", Inputs: eurInputs()})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Judge
	if res.Branch != BranchSubstitute || !slices.Equal(res.Tools, []string{"currency.convert"}) ||
		j.DecidedBy != DecidedByModel || j.Verdict != VerdictPick || j.RulePick != "" || len(j.Offered) > llm.MaxJudgeCandidates {
		t.Fatalf("branch %q tools %v judge %+v; want the model's pick substituted", res.Branch, res.Tools, j)
	}
}

func TestJudgeBadAnswerFallsBackToRule(t *testing.T) {
	cases := map[string]string{
		"not offered":  `{"tool":"units.convert","reason":"close enough"}`,
		"unknown tool": `{"tool":"bank.transfer","reason":"money"}`,
		"no reason":    `{"tool":"currency.convert"}`,
		"extra field":  `{"tool":"none","reason":"x","confidence":0.9}`,
		"not JSON":     `I think currency.convert`,
	}
	for name, answer := range cases {
		t.Run(name, func(t *testing.T) {
			f := workflowstest.New(t, nil)
			clearMatch(f)
			judging(f, "CONVERT_CURRENCY", answer)
			res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs()})
			if err != nil {
				t.Fatal(err)
			}
			j := res.Judge
			if res.Branch != BranchSubstitute || j.DecidedBy != DecidedByRule || j.ModelPick != "" || !strings.Contains(j.Reason, "invalid") {
				t.Fatalf("branch %q judge %+v; want the rule's substitution", res.Branch, j)
			}
		})
	}
}

func TestJudgeWithoutModelLeavesTheRule(t *testing.T) {
	f := workflowstest.New(t, nil)
	clearMatch(f)
	res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs()})
	if err != nil {
		t.Fatal(err)
	}
	if j := res.Judge; res.Branch != BranchSubstitute || j == nil || j.DecidedBy != DecidedByRule || !strings.Contains(j.Reason, "no language model") {
		t.Fatalf("branch %q judge %+v", res.Branch, j)
	}
}

func TestJudgeTimeoutFallsBackToRule(t *testing.T) {
	f := workflowstest.New(t, nil)
	clearMatch(f)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.RegisterActivity(&activities.Graph{Searcher: f.Searcher, Gaps: f.Gaps})
	env.RegisterActivity(&activities.Modules{Router: f.Router, Schemas: f, Usage: f.Usage, Pairs: f.Usage})
	var l *activities.LLM
	env.RegisterActivity(l)
	calls := 0
	env.OnActivity(l.JudgeSubstitution, mock.Anything, mock.Anything).Return(func(ctx context.Context, _ activities.JudgeInput) (llm.Judgement, error) {
		calls++
		<-ctx.Done() // a model that never answers
		return llm.Judgement{}, ctx.Err()
	})
	env.ExecuteWorkflow(NovelVerbWorkflow, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs(), Options: NovelVerbOptions{JudgeTimeout: 200 * time.Millisecond}})
	var res NovelVerbResult
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if j := res.Judge; res.Branch != BranchSubstitute || j.DecidedBy != DecidedByRule || !strings.Contains(j.Reason, "in time") {
		t.Fatalf("branch %q judge %+v; want the rule's substitution after the timeout", res.Branch, j)
	}
	if want := int(judgeOptions(0).RetryPolicy.MaximumAttempts); calls != want {
		t.Fatalf("judge called %d times, want %d attempts", calls, want)
	}
}
