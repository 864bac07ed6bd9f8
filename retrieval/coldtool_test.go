package retrieval_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

// TestHistoryElsewhereLeavesColdToolDecision: history never hurts. With dense
// history on every tool but the right one (a tool nobody has used yet), a
// paraphrase of the cold tool's job must be ranked and decided as it was
// zero-shot. Before the fix the usage evidence beyond the gate (open while
// most candidates have served queries) lifted tools for their history on
// other queries above the cold tool, and the substitution became a refusal.
// History on the right tool itself still substitutes it.
func TestHistoryElsewhereLeavesColdToolDecision(t *testing.T) {
	ctx := context.Background()
	caller := access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}
	r := rand.New(rand.NewPCG(7, 11))
	var vocab []string
	for i := range 300 {
		vocab = append(vocab, fmt.Sprintf("zq%03dk", i))
	}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	cat := historyCatalogue()
	for i := range 60 {
		cat = append(cat, retrievaltest.Manifest(fmt.Sprintf("cat.t%02d", i), "DO_"+strings.ToUpper(vocab[r.IntN(300)]), "misc", words(12)))
	}
	// Every tool but fx.convert has served 20 queries, each four
	// consecutive words of its own description.
	var elsewhere []retrieval.Event
	for _, m := range cat {
		if m.ToolID == "fx.convert" {
			continue
		}
		dw := strings.Fields(m.Description + " " + m.Description)
		for j := range 20 {
			elsewhere = append(elsewhere, retrieval.Event{ToolID: m.ToolID, Success: true, SessionID: fmt.Sprintf("%s-%d", m.ToolID, j),
				Query: strings.Join(dw[j%4:j%4+4], " ")})
		}
	}
	const q = "convert money between two currencies at the exchange rate"
	type outcome struct {
		ids  []string
		ok   bool
		conf float64
		why  string
	}
	decide := func(cat []tool.Manifest, evs []retrieval.Event) outcome {
		t.Helper()
		svc, _ := newService(t, retrieval.Options{CacheSize: -1}, cat...)
		if len(evs) > 0 {
			if err := svc.RecordEvents(ctx, caller, evs); err != nil {
				t.Fatal(err)
			}
		}
		res, err := svc.Search(ctx, retrieval.FulfilmentQuery(q, "", caller, nil))
		if err != nil {
			t.Fatal(err)
		}
		var cands []retrieval.Candidate
		for _, h := range res.Hits {
			cands = append(cands, h.Candidate())
		}
		ok, why := retrieval.DefaultSubstituteRule().Decide(cands)
		return outcome{ids(res.Hits), ok, retrieval.DefaultDecisionModel.Confidence(cands), why}
	}

	zero := decide(cat, nil)
	if !zero.ok || len(zero.ids) == 0 || zero.ids[0] != "fx.convert" {
		t.Fatalf("zero-shot: %v, substitute %v (%s); want fx.convert substituted", zero.ids, zero.ok, zero.why)
	}
	cold := decide(cat, elsewhere)
	if !slices.Equal(cold.ids, zero.ids) || cold.ok != zero.ok || math.Abs(cold.conf-zero.conf) > 1e-9 {
		t.Errorf("history on the other tools: %v, substitute %v (%s); zero-shot %v, substitute %v (%s)",
			cold.ids, cold.ok, cold.why, zero.ids, zero.ok, zero.why)
	}

	// The right tool's own history (queries like this one) still counts.
	own := slices.Clone(elsewhere)
	for i, s := range []string{"convert 40 dollars into euros", "money from pounds to yen at the exchange rate", "convert my francs between currencies"} {
		for j := range 5 {
			own = append(own, retrieval.Event{ToolID: "fx.convert", Success: true, SessionID: fmt.Sprintf("fx-%d-%d", i, j), Query: s})
		}
	}
	hot := decide(cat, own)
	if !hot.ok || hot.ids[0] != "fx.convert" {
		t.Errorf("history on every tool: %v, substitute %v (%s); want fx.convert substituted", hot.ids, hot.ok, hot.why)
	}
}
