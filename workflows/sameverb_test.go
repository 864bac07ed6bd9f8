package workflows

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// crowdedMatch scripts what a 10,000-tool catalogue gives CONVERT_CURRENCY:
// currency.convert first by 4.4 points, but another tool's description a
// little more similar, so the decision model's confidence stays under the
// bar.
func crowdedMatch(f *workflowstest.Fixture, words string) {
	f.RankedHit(words, "currency.convert", retrieval.Candidate{Similarity: 0.822, Score: 8.64, Keyword: 1.2})
	f.RankedHit(words, "currency.rates", retrieval.Candidate{Similarity: 0.725, Score: 4.21, Keyword: 1.0})
	f.RankedHit(words, "units.convert", retrieval.Candidate{Similarity: 0.846, Score: 3.83, Keyword: 1.1})
	f.RankedHit(words, "text.stats", retrieval.Candidate{Similarity: 0.713, Score: 3.77})
}

// TestSubstitutesTheOnlyProviderOfTheVerb: the tool that provides the
// requested verb itself, first in the ranking and the only candidate that
// provides it, is substituted although look-alikes hold the confidence
// under the bar; the same ranking for a verb no tool provides is not.
func TestSubstitutesTheOnlyProviderOfTheVerb(t *testing.T) {
	f := workflowstest.New(t, nil)
	crowdedMatch(f, "convert currency")
	res, _, err := run(t, f, NovelVerbInput{Verb: "CONVERT_CURRENCY", Inputs: eurInputs()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != BranchSubstitute || !slices.Equal(res.Tools, []string{"currency.convert"}) || !strings.Contains(res.Reason, "provides the verb") {
		t.Fatalf("branch %q tools %v reason %q; want currency.convert substituted as the verb's only provider", res.Branch, res.Tools, res.Reason)
	}

	f = workflowstest.New(t, nil)
	crowdedMatch(f, "exchange money")
	res, _, _ = run(t, f, NovelVerbInput{Verb: "EXCHANGE_MONEY", Inputs: eurInputs()})
	if res.Branch == BranchSubstitute {
		t.Fatalf("EXCHANGE_MONEY, which no tool provides, substituted %v on a crowded ranking: %q", res.Tools, res.Reason)
	}
}
