package retrieval_test

import (
	"context"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/adapter"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
)

// TestSetModel: a model's adapter maps the query before the semantic
// search and its weights replace the configured ones; nil restores the
// configured ranking exactly.
func TestSetModel(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t, retrieval.Options{CacheSize: -1},
		retrievaltest.Manifest("fx.convert", "CONVERT_CURRENCY", "finance", "Convert an amount between currencies."),
		retrievaltest.Manifest("weather.forecast", "GET_FORECAST", "weather", "Forecast the weather for a city."),
		retrievaltest.Manifest("mail.send", "SEND_EMAIL", "mail", "Send an email message."))
	q := retrieval.Query{Text: "convert dollars to euros", MaxTools: 3, Caller: access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}}
	rank := func() []retrieval.Hit {
		t.Helper()
		hits, _, err := svc.Rank(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	before := rank()
	if svc.Model() != nil || before[0].Tool.ID != "fx.convert" {
		t.Fatalf("before: %v", ids(before))
	}
	// An adapter that maps this query onto the weather tool's direction:
	// Δ = −I + 50·w·qᵀ, so q + Δq = 50·w.
	wv, _ := emb.EmbedQuery(ctx, "Forecast the weather for a city.")
	qv, _ := emb.EmbedQuery(ctx, q.Text)
	a := adapter.Identity(emb.Dim)
	for r := range emb.Dim {
		for c := range emb.Dim {
			a.Delta[r*emb.Dim+c] = 50 * wv[r] * qv[c]
			if r == c {
				a.Delta[r*emb.Dim+c]--
			}
		}
	}
	only := retrieval.Weights{Semantic: 1}
	svc.SetModel(&retrieval.Model{Version: "v1", Adapter: a, Weights: &only})
	after := rank()
	if svc.Model().Version != "v1" || after[0].Tool.ID != "weather.forecast" {
		t.Fatalf("with the adapter: %v", ids(after))
	}
	for _, h := range after {
		if h.Breakdown.Keyword.Weighted != 0 || h.Breakdown.Verb.Weighted != 0 {
			t.Fatalf("the model's weights did not apply: %+v", h.Breakdown)
		}
	}
	svc.SetModel(nil)
	again := rank()
	for i := range before {
		if again[i].Tool.ID != before[i].Tool.ID || again[i].Score != before[i].Score {
			t.Fatalf("after SetModel(nil): %v, want %v", ids(again), ids(before))
		}
	}
}
