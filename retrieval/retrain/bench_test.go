package retrain

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

// BenchmarkTrainAtScale is a retrain's training at a deployment's size:
// 200 tools (MetaTool's catalogue has 199), 5,000 served queries and
// 512-dimensional vectors (the built-in embedder's), adapter epochs at
// their default; it reports the seconds of one training (two adapter
// fits and the weights' tuning replays) and of one evaluation.
//
//	go test ./retrieval/retrain -run '^$' -bench TrainAtScale -benchtime 1x
func BenchmarkTrainAtScale(b *testing.B) {
	ctx := context.Background()
	st, emb, live, _ := atScale(b)
	svc, err := New(st, emb, live, retrieval.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		v, err := svc.Train(ctx, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(v.TrainSeconds, "train-s")
		b.ReportMetric(float64(v.Counts.CataloguePairs+v.Counts.UsagePairs), "pairs")
		ev, err := svc.Evaluate(ctx, v.ID)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%+v; held-out %d: current %+v, candidate %+v, scale %.1f", v.Counts, ev.Candidate.N, ev.Current, ev.Candidate, v.Scale)
	}
}

// BenchmarkBuildRecord is the record's part of a training at the same
// size: the training part's 4,000 served queries replayed fold by fold
// through the fulfilment search; it reports the seconds of one record.
//
//	go test ./retrieval/retrain -run '^$' -bench BuildRecord -benchtime 1x
func BenchmarkBuildRecord(b *testing.B) {
	ctx := context.Background()
	st, emb, _, evs := atScale(b)
	served := make([]graph.ServedQuery, 0, 4000)
	for _, e := range evs[:4000] {
		served = append(served, graph.ServedQuery{ToolID: e.ToolID, Query: e.Query})
	}
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		r, err := BuildRecord(ctx, st, emb, retrieval.Options{}, nil, served)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "record-s")
		b.ReportMetric(float64(r.Len()), "tools")
	}
}

// atScale is the benchmarks' deployment: 200 tools and 5,000 served
// queries, recorded.
func atScale(b *testing.B) (graph.Store, retrievaltest.Words, *retrieval.Service, []retrieval.Event) {
	ctx := context.Background()
	emb := retrievaltest.Words{Dim: 512}
	st := retrievaltest.Store(b, emb)
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"}
	var ms []tool.Manifest
	for i := range 200 {
		desc := fmt.Sprintf("Handle %s %s requests for the %s service. It accepts %s input.", words[i%16], words[(i/16)%16], words[(i*7)%16], words[(i*3)%16])
		m := retrievaltest.Manifest(fmt.Sprintf("t%03d.op", i), fmt.Sprintf("DO_%s_%d", words[i%16], i), "c", desc)
		m.UseCases = []string{fmt.Sprintf("%s a %s", words[(i*5)%16], words[(i*11)%16]), fmt.Sprintf("run %s %d", words[i%16], i)}
		ms = append(ms, m)
	}
	retrievaltest.Register(b, st, emb, ms...)
	live := retrieval.New(st, emb, retrieval.Options{})
	var evs []retrieval.Event
	for i := range 5000 {
		t := (i * 37) % 200
		evs = append(evs, retrieval.Event{ToolID: ms[t].ToolID, Success: true,
			Query: fmt.Sprintf("need %s %s done quickly number %d", words[t%16], words[(t/16)%16], i)})
	}
	if err := live.RecordEvents(ctx, owner, evs); err != nil {
		b.Fatal(err)
	}
	return st, emb, live, evs
}
