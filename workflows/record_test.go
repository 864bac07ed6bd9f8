package workflows

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// usedRanking scripts a search where every candidate has served queries
// like this one (the decision's evidence part reads it) and
// currency.convert leads by what use taught the ranking; record is its
// record as a first candidate.
func usedRanking(f *workflowstest.Fixture, words string, lo float64, recorded bool) []retrieval.Candidate {
	cands := []retrieval.Candidate{
		{Similarity: 0.62, Score: 40, Keyword: 2, Learned: 22, Record: lo, Recorded: recorded},
		{Similarity: 0.60, Score: 9, Keyword: 1, Learned: 2},
		{Similarity: 0.55, Score: 8, Keyword: 0.5, Learned: 2},
		{Similarity: 0.50, Score: 7, Learned: 1},
		{Similarity: 0.45, Score: 6, Learned: 1},
	}
	for i, id := range []string{"currency.convert", "currency.rates", "units.convert", "text.stats", "currency.list_currencies"} {
		f.RankedHit(words, id, cands[i])
	}
	return cands
}

// TestDecisionReadsTheRecord: the workflow passes a candidate's record,
// learned from use, to the decision. The same search substitutes its
// first without a record and refuses it when use found it first and wrong
// for most queries.
func TestDecisionReadsTheRecord(t *testing.T) {
	for _, c := range []struct {
		name     string
		lo       float64
		recorded bool
		want     bool
	}{
		{"no record", 0, false, true},
		{"an average record", 0, true, true},
		{"often first and wrong", -6, true, false},
	} {
		f := workflowstest.New(t, nil)
		cands := usedRanking(f, "exchange money", c.lo, c.recorded)
		if got := retrieval.DefaultSubstituteRule().Substitute(cands); got != c.want || !retrieval.HasEvidence(cands) {
			t.Fatalf("%s: the fixture's decision is %v (evidence %v), want %v", c.name, got, retrieval.HasEvidence(cands), c.want)
		}
		res, _, err := run(t, f, NovelVerbInput{Verb: "EXCHANGE_MONEY", Inputs: eurInputs()})
		if !c.want {
			// Refused, the verb goes to decomposition, which fails here:
			// no language model is configured.
			if err == nil || !strings.Contains(err.Error(), "decompose EXCHANGE_MONEY") {
				t.Fatalf("%s: branch %q tools %v, error %v; want the verb decomposed", c.name, res.Branch, res.Tools, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Branch == BranchSubstitute && slices.Equal(res.Tools, []string{"currency.convert"}); got != c.want {
			t.Fatalf("%s: branch %q tools %v reason %q; substituted %v, want %v", c.name, res.Branch, res.Tools, res.Reason, got, c.want)
		}
	}
}
