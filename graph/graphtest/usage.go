package graphtest

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

func testUsage(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("fx", "CONVERT_CURRENCY", "FX", "finance", "d", unit(0)),
		mk("wx", "GET_WEATHER", "Weather", "weather", "d", unit(1)),
		mk("fs", "READ_FILE", "Files", "files", "d", unit(2)),
	)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := []graph.UsageEvent{
		{ToolID: "fx", SessionID: "s1", Query: "euros", QueryEmbedding: unit(3), Success: true, At: base},
		{ToolID: "fx", SessionID: "s1", Query: "yen", QueryEmbedding: unit(4), Success: true, At: base.Add(time.Minute)},
		{ToolID: "fx", SessionID: "s2", Query: "bad", QueryEmbedding: unit(5), Success: false, At: base.Add(2 * time.Minute)},
		{ToolID: "wx", SessionID: "s1", UserID: "ana", Query: "rain", Success: true, At: base.Add(3 * time.Minute)},
		{ToolID: "wx", SessionID: "s1", Query: "snow", QueryEmbedding: unit(6), Success: false, At: base.Add(4 * time.Minute)},
	}
	if err := s.RecordUsage(ctx, events); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	u, err := s.Usage(ctx, []string{"fx", "wx", "fs", "nope"})
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	if _, ok := u["fs"]; ok {
		t.Errorf("unused tool has usage: %+v", u["fs"])
	}
	fx := u["fx"]
	if fx.Uses != 3 || fx.Successes != 2 || fx.CentroidN != 2 || !fx.LastUsed.Equal(base.Add(2*time.Minute)) {
		t.Errorf("fx usage = %+v", fx)
	}
	if len(fx.Centroid) != Dim || !approx(norm(fx.Centroid), 1, 1e-5) {
		t.Fatalf("fx centroid %v is not unit length", fx.Centroid)
	}
	// Mean of e3 and e4 (the failed e5 does not count), normalised.
	want := mix(3, 1, 4, 1)
	if c := graph.Cosine(fx.Centroid, want); !approx(c, 1, 1e-5) {
		t.Errorf("fx centroid = %v, want %v", fx.Centroid, want)
	}
	wx := u["wx"]
	if wx.Uses != 2 || wx.Successes != 1 || wx.CentroidN != 0 || wx.Centroid != nil {
		t.Errorf("wx usage = %+v (its only embedding came from a failure)", wx)
	}

	hits, err := s.UsageSearch(ctx, unit(3), 5, graph.Filter{})
	if err != nil {
		t.Fatalf("UsageSearch: %v", err)
	}
	if !sameStrings(ids(hits), []string{"fx"}) || !approx(hits[0].Score, 1/norm([]float32{1, 1}), 1e-4) {
		t.Errorf("UsageSearch(e3) = %+v; want only fx (wx has no centroid) with cosine 0.7071", hits)
	}
	if hits, _ := s.UsageSearch(ctx, unit(3), 5, graph.Filter{Categories: []string{"weather"}}); len(hits) != 0 {
		t.Errorf("UsageSearch ignores the filter: %v", ids(hits))
	}
	if _, err := s.UsageSearch(ctx, []float32{1}, 5, graph.Filter{}); !errors.Is(err, graph.ErrDimension) {
		t.Errorf("UsageSearch with wrong dimension: err = %v", err)
	}

	// A later event moves the centroid.
	if err := s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "fx", SessionID: "s3", QueryEmbedding: unit(3), Success: true, At: base.Add(time.Hour)}}); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	u, _ = s.Usage(ctx, []string{"fx"})
	if want := graph.Normalize([]float32{0, 0, 0, 2, 1, 0, 0, 0}); !approx(graph.Cosine(u["fx"].Centroid, want), 1, 1e-5) || u["fx"].CentroidN != 3 {
		t.Errorf("centroid after third event = %v (n=%d), want %v", u["fx"].Centroid, u["fx"].CentroidN, want)
	}

	hist, err := s.SessionHistory(ctx, "s1", 10)
	if err != nil {
		t.Fatalf("SessionHistory: %v", err)
	}
	var got []string
	for _, e := range hist {
		got = append(got, fmt.Sprintf("%s/%s/%v", e.ToolID, e.UserID, e.Success))
	}
	// Each event carries the user it was recorded for (pairings are
	// learned only between one user's events of a session).
	if !sameStrings(got, []string{"wx//false", "wx/ana/true", "fx//true", "fx//true"}) {
		t.Errorf("SessionHistory(s1) = %v, want newest first, with their users", got)
	}
	if !hist[0].At.Equal(base.Add(4 * time.Minute)) {
		t.Errorf("newest event at %v", hist[0].At)
	}
	if hist, _ := s.SessionHistory(ctx, "s1", 2); len(hist) != 2 || hist[0].ToolID != "wx" {
		t.Errorf("SessionHistory limit 2 = %+v", hist)
	}
	if hist, err := s.SessionHistory(ctx, "none", 10); err != nil || len(hist) != 0 {
		t.Errorf("SessionHistory(unknown) = %+v, %v", hist, err)
	}

	// The query log: successful events with a query, newest first, across
	// sessions; failures and events without a query are not in it.
	served, err := s.ServedQueries(ctx, 10)
	if err != nil {
		t.Fatalf("ServedQueries: %v", err)
	}
	got = nil
	for _, q := range served {
		got = append(got, q.ToolID+"/"+q.Query)
	}
	if !sameStrings(got, []string{"wx/rain", "fx/yen", "fx/euros"}) {
		t.Errorf("ServedQueries = %v, want [wx/rain fx/yen fx/euros]", got)
	}
	if len(served) > 0 && !served[0].At.Equal(base.Add(3*time.Minute)) {
		t.Errorf("newest served query at %v, want %v", served[0].At, base.Add(3*time.Minute))
	}
	// Embeddings come back with the events that carried one (rain had none).
	if len(served) == 3 {
		if served[0].Embedding != nil {
			t.Errorf("wx/rain has embedding %v, want none", served[0].Embedding)
		}
		if !approx(graph.Cosine(served[1].Embedding, unit(4)), 1, 1e-5) || !approx(graph.Cosine(served[2].Embedding, unit(3)), 1, 1e-5) {
			t.Errorf("served query embeddings = %v, %v; want e4, e3", served[1].Embedding, served[2].Embedding)
		}
	}
	if served, _ := s.ServedQueries(ctx, 1); len(served) != 1 || served[0].Query != "rain" {
		t.Errorf("ServedQueries limit 1 = %+v", served)
	}

	// All or none: an unknown tool sinks the batch.
	before, _ := s.Stats(ctx)
	err = s.RecordUsage(ctx, []graph.UsageEvent{
		{ToolID: "fs", SessionID: "s9", Success: true},
		{ToolID: "ghost", SessionID: "s9", Success: true},
	})
	if err == nil {
		t.Fatal("RecordUsage with an unknown tool succeeded")
	}
	after, _ := s.Stats(ctx)
	if after.UsageEvents != before.UsageEvents {
		t.Errorf("failed RecordUsage applied events: %d -> %d", before.UsageEvents, after.UsageEvents)
	}
	if u, _ := s.Usage(ctx, []string{"fs"}); len(u) != 0 {
		t.Errorf("failed RecordUsage counted fs: %+v", u)
	}
	if hist, _ := s.SessionHistory(ctx, "s9", 10); len(hist) != 0 {
		t.Errorf("failed RecordUsage wrote session history: %+v", hist)
	}
	if err := s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "fs", QueryEmbedding: []float32{1, 2}, Success: true}}); !errors.Is(err, graph.ErrDimension) {
		t.Errorf("RecordUsage with a wrong dimension: err = %v, want ErrDimension", err)
	}
}

func testStats(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if st.Tools != 0 || st.Edges != 0 || st.Embedder != (graph.EmbedderInfo{Model: Model, Dimension: Dim}) {
		t.Errorf("empty store stats = %+v", st)
	}
	put(t, s,
		mk("a", "CONVERT_CURRENCY", "A", "finance", "d", unit(0), tags("money", "fx"), groups("default", "pro"),
			entities(graph.EntityRef{Name: "Euro", Type: "Currency"})),
		mk("b", "CONVERT_CURRENCY", "B", "finance", "d", unit(1), tags("money")),
		mk("c", "GET_WEATHER", "C", "weather", "d", unit(2), tags("forecast"), status(graph.StatusDeprecated)),
	)
	if err := s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "a", Success: true}, {ToolID: "b", Success: false}}); err != nil {
		t.Fatal(err)
	}
	st, err = s.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	want := graph.Stats{
		Tools: 3, ByStatus: map[string]int{graph.StatusActive: 2, graph.StatusDeprecated: 1},
		Verbs: 2, Entities: 2, Categories: 2, Tags: 3, Groups: 2, UsageEvents: 2,
		Embedder: graph.EmbedderInfo{Model: Model, Dimension: Dim},
	}
	edges := st.Edges
	st.Edges = 0
	if fmt.Sprint(st) != fmt.Sprint(want) {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
	// At least PROVIDES×3, IN×3, TAGGED×4, MEMBER_OF×4, ABOUT×1, IS_A×1.
	if edges < 16 {
		t.Errorf("Stats.Edges = %d, want at least 16", edges)
	}
}

func testConcurrency(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	const writers, perWriter = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter*3)
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				id := fmt.Sprintf("w%d.t%02d", w, i)
				if _, err := s.UpsertTool(ctx, mk(id, "DO_THING", "Parallel thing", "c", "concurrent tool", unit(w+i))); err != nil {
					errs <- fmt.Errorf("upsert %s: %w", id, err)
				}
			}
		}(w)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				if _, err := s.VectorSearch(ctx, unit(i), 5, graph.Filter{}); err != nil {
					errs <- fmt.Errorf("vector search: %w", err)
				}
				if _, err := s.TextSearch(ctx, "parallel thing", 5, graph.Filter{}); err != nil {
					errs <- fmt.Errorf("text search: %w", err)
				}
				if _, err := s.ListTools(ctx, graph.ListQuery{Limit: 7}); err != nil {
					errs <- fmt.Errorf("list: %w", err)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p, err := s.ListTools(ctx, graph.ListQuery{Limit: 1000})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if p.Total != writers*perWriter || len(p.Items) != writers*perWriter {
		t.Errorf("after parallel upserts: total %d, items %d; want %d", p.Total, len(p.Items), writers*perWriter)
	}
	got := summaryIDs(p.Items)
	if !sort.StringsAreSorted(got) {
		t.Errorf("ListTools not ordered by id: %v", got)
	}
	hits, err := s.TextSearch(ctx, "parallel", writers*perWriter, graph.Filter{})
	if err != nil || len(hits) != writers*perWriter {
		t.Errorf("TextSearch after parallel upserts found %d, %v", len(hits), err)
	}
	hits, err = s.VectorSearch(ctx, unit(0), writers*perWriter, graph.Filter{})
	if err != nil || len(hits) != writers*perWriter {
		t.Errorf("VectorSearch after parallel upserts found %d, %v", len(hits), err)
	}
}

// testMeanVector: the graph.MeanVectorer capability averages the
// normalised embeddings of active tools only. A store may cache the mean,
// so it is read once, after every write.
func testMeanVector(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var mv graph.MeanVectorer = s
	if v, err := mv.MeanVector(ctx); err != nil || v != nil {
		t.Fatalf("empty store: MeanVector = %v, %v; want nil", v, err)
	}
	s = fresh(t, open)
	mv = s
	scaled := unit(0)
	scaled[0] = 3 // not unit length: the mean is of normalised vectors
	put(t, s,
		mk("a", "DO_A", "A", "x", "d", scaled),
		mk("b", "DO_B", "B", "x", "d", unit(1)),
		mk("c", "DO_C", "C", "x", "d", unit(2)),
		mk("d", "DO_D", "D", "x", "d", unit(3), status(graph.StatusDeprecated)),
	)
	if err := s.SetStatus(ctx, "c", graph.StatusDisabled, "contract"); err != nil {
		t.Fatalf("SetStatus: %v", err)
	}
	v, err := mv.MeanVector(ctx)
	if err != nil {
		t.Fatalf("MeanVector: %v", err)
	}
	want := make([]float32, Dim)
	want[0], want[1] = 0.5, 0.5
	if len(v) != Dim {
		t.Fatalf("MeanVector = %v, want %v", v, want)
	}
	for i := range want {
		if !approx(float64(v[i]), float64(want[i]), 1e-6) {
			t.Fatalf("MeanVector = %v, want %v (active a and b only)", v, want)
		}
	}
}

// testServedQueriesAfter: served queries carry their place in the order
// of writes, and a reader continues from the last one it saw, oldest first,
// seeing each once, whatever times the events carry.
func testServedQueriesAfter(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("fx", "CONVERT_CURRENCY", "FX", "finance", "d", unit(0)),
		mk("wx", "GET_WEATHER", "Weather", "weather", "d", unit(1)),
	)
	if got, err := s.ServedQueriesAfter(ctx, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("ServedQueriesAfter on an empty log = %+v, %v", got, err)
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Written in this order; the times run backwards, as a client's own
	// clocks may.
	if err := s.RecordUsage(ctx, []graph.UsageEvent{
		{ToolID: "fx", Query: "euros", QueryEmbedding: unit(3), Success: true, At: base.Add(time.Hour)},
		{ToolID: "fx", Query: "failed", Success: false, At: base},
		{ToolID: "wx", Query: "", Success: true, At: base},
		{ToolID: "wx", Query: "rain", Success: true, At: base.Add(time.Minute)},
	}); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	if err := s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "fx", Query: "yen", Success: true, At: base}}); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	all, err := s.ServedQueriesAfter(ctx, 0, 10)
	if err != nil {
		t.Fatalf("ServedQueriesAfter: %v", err)
	}
	var got []string
	for i, q := range all {
		got = append(got, q.ToolID+"/"+q.Query)
		if q.Seq < 1 || (i > 0 && q.Seq <= all[i-1].Seq) {
			t.Errorf("Seq %d after %v: want increasing from 1", q.Seq, all[:i])
		}
	}
	if !sameStrings(got, []string{"fx/euros", "wx/rain", "fx/yen"}) {
		t.Fatalf("ServedQueriesAfter(0) = %v, want [fx/euros wx/rain fx/yen] in the order written", got)
	}
	if !approx(graph.Cosine(all[0].Embedding, unit(3)), 1, 1e-5) || all[1].Embedding != nil || !all[0].At.Equal(base.Add(time.Hour)) {
		t.Errorf("euros = %+v, rain = %+v; want the embedding and time written", all[0], all[1])
	}
	// ServedQueries (newest by time first) carries the same Seq.
	latest, err := s.ServedQueries(ctx, 10)
	if err != nil {
		t.Fatalf("ServedQueries: %v", err)
	}
	seqs := map[string]int64{}
	for _, q := range all {
		seqs[q.Query] = q.Seq
	}
	for _, q := range latest {
		if q.Seq != seqs[q.Query] {
			t.Errorf("ServedQueries: %s has Seq %d, ServedQueriesAfter %d", q.Query, q.Seq, seqs[q.Query])
		}
	}
	// Continuing from a Seq, and paging with a limit.
	if rest, err := s.ServedQueriesAfter(ctx, all[0].Seq, 10); err != nil || len(rest) != 2 || rest[0].Query != "rain" || rest[1].Query != "yen" {
		t.Errorf("ServedQueriesAfter(euros) = %+v, %v; want rain, yen", rest, err)
	}
	if page, err := s.ServedQueriesAfter(ctx, 0, 1); err != nil || len(page) != 1 || page[0].Query != "euros" {
		t.Errorf("ServedQueriesAfter limit 1 = %+v, %v; want euros", page, err)
	}
	if rest, err := s.ServedQueriesAfter(ctx, all[2].Seq, 10); err != nil || len(rest) != 0 {
		t.Errorf("ServedQueriesAfter(last) = %+v, %v; want none", rest, err)
	}
	// A later write comes after everything already read.
	if err := s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "wx", Query: "snow", Success: true, At: base}}); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	if rest, err := s.ServedQueriesAfter(ctx, all[2].Seq, 10); err != nil || len(rest) != 1 || rest[0].Query != "snow" || rest[0].Seq <= all[2].Seq {
		t.Errorf("after a new write: %+v, %v; want snow", rest, err)
	}
}

// testVectorScores: the graph.VectorScorer capability scores the
// listed tools the filter allows against several vectors at once, with the
// scores VectorSearch gives, and nothing else.
func testVectorScores(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var vs graph.VectorScorer = s
	put(t, s,
		mk("a", "DO_A", "A", "x", "d", unit(0)),
		mk("b", "DO_B", "B", "x", "d", mix(0, 3, 1, 1)),
		mk("c", "DO_C", "C", "y", "d", mix(0, 1, 1, 1)),
		mk("d", "DO_D", "D", "x", "d", unit(1), status(graph.StatusDeprecated)),
	)
	qs := [][]float32{{2, 0, 0, 0, 0, 0, 0, 0}, mix(0, 1, 1, 2)}
	ids := []string{"a", "b", "c", "d", "nope"}
	got, err := vs.VectorScores(ctx, qs, graph.Filter{IDs: ids})
	if err != nil {
		t.Fatalf("VectorScores: %v", err)
	}
	if len(got) != 3 || got["d"] != nil || got["nope"] != nil {
		t.Fatalf("VectorScores = %v, want the active listed tools a, b and c", got)
	}
	for i, q := range qs {
		hits, err := s.VectorSearch(ctx, q, 10, graph.Filter{IDs: ids})
		if err != nil {
			t.Fatalf("VectorSearch: %v", err)
		}
		for _, h := range hits {
			if sc := got[h.Tool.ID]; len(sc) != len(qs) || !approx(sc[i], h.Score, 1e-6) {
				t.Errorf("vector %d, %s: VectorScores %v, VectorSearch %v", i, h.Tool.ID, sc, h.Score)
			}
		}
	}
	// The filter applies as it does to a search: categories, the caller's
	// visibility, and an empty list scores nothing.
	f := graph.Filter{IDs: ids, Categories: []string{"x"}, Allow: func(sum *graph.ToolSummary) bool { return sum.ID != "b" }}
	if got, err := vs.VectorScores(ctx, qs, f); err != nil || len(got) != 1 || got["a"] == nil {
		t.Errorf("filtered VectorScores = %v, %v; want only a", got, err)
	}
	if got, err := vs.VectorScores(ctx, qs, graph.Filter{}); err != nil || len(got) != 0 {
		t.Errorf("no ids: VectorScores = %v, %v; want none", got, err)
	}
	if _, err := vs.VectorScores(ctx, [][]float32{{1, 2, 3}}, graph.Filter{IDs: ids}); !errors.Is(err, graph.ErrDimension) {
		t.Errorf("wrong dimension: err = %v, want ErrDimension", err)
	}
}
