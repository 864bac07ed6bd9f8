package activities

import (
	"context"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

// TestRetrievalSearcherCarriesTheRecord: the searcher reads each hit's
// record from the model the service applies (the promoted version's), so
// the workflow's decision sees it; a tool without one, or a service
// without a model, reports none.
func TestRetrievalSearcherCarriesTheRecord(t *testing.T) {
	emb := retrievaltest.Words{Dim: 64}
	st := retrievaltest.Store(t, emb)
	var ms []tool.Manifest
	for _, d := range []struct{ id, verb, desc string }{
		{"fx.convert", "CONVERT_CURRENCY", "Convert an amount of money between currencies."},
		{"fx.rates", "GET_RATES", "Exchange rates of money between currencies."},
		{"weather.forecast", "GET_FORECAST", "Forecast the weather for a city."},
	} {
		ms = append(ms, retrievaltest.Manifest(d.id, d.verb, "misc", d.desc))
	}
	retrievaltest.Register(t, st, emb, ms...)
	svc := retrieval.New(st, emb, retrieval.Options{})
	s := RetrievalSearcher{Service: svc}
	req := SearchRequest{Query: "convert money between currencies", Caller: access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}}
	search := func() map[string]SearchHit {
		hits, err := s.Search(context.Background(), req)
		if err != nil || len(hits) < 2 {
			t.Fatalf("search: %v %v", hits, err)
		}
		out := map[string]SearchHit{}
		for _, h := range hits {
			out[h.Tool.ID] = h
		}
		return out
	}
	for id, h := range search() {
		if h.Recorded || h.Record != 0 {
			t.Fatalf("no model: %s reports a record (%v)", id, h.Record)
		}
	}
	rec := retrieval.NewRecord(map[string]retrieval.RecordEntry{"fx.rates": {First: 10, Right: 1}, "weather.forecast": {First: 10, Right: 10}})
	svc.SetModel(&retrieval.Model{Version: "rv-test", Record: rec})
	hits := search()
	want, _ := rec.Of("fx.rates")
	if h := hits["fx.rates"]; !h.Recorded || h.Record != want || want >= 0 {
		t.Fatalf("fx.rates: %+v, want its record %v", h, want)
	}
	if h := hits["fx.convert"]; h.Recorded || h.Record != 0 {
		t.Fatalf("fx.convert has no record, reports %+v", h)
	}
}
