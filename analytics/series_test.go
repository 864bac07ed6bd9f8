package analytics_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
)

// The sampler writes searches (count and latency histogram), the open
// gaps and each closed fulfilment once, and the dashboard's reads see
// minutes and hours rolled up together.
func TestSamplerFlush(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 7, 1, 6, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	runs := fakeRuns{
		{Verb: "A", Branch: "substitute", Status: "completed", Start: now.Add(-2 * time.Minute), Close: now.Add(-20 * time.Second)},
		{Verb: "B", Branch: "no_capability", Status: "completed", Start: now.Add(-time.Hour), Close: now.Add(-50 * time.Minute)}, // closed long before
		{Verb: "C", Branch: "search", Status: "running", Start: now.Add(-time.Minute)},
	}
	if _, err := st.RecordGap(ctx, graph.GapEvent{Verb: "CARVE_PUMPKIN", At: now}); err != nil {
		t.Fatal(err)
	}
	s := analytics.NewSampler(st, runs, graph.DefaultRetention).WithClock(clock)
	for _, ms := range []int{3, 40, 40, 900} {
		s.Search("hybrid", time.Duration(ms)*time.Millisecond, false)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if err := s.Flush(ctx); err != nil { // nothing new: the fulfilment is not counted again
		t.Fatal(err)
	}
	hour := graph.Truncate(now, graph.ResHour)
	pts, err := analytics.SeriesAt(ctx, st, graph.SeriesQuery{Res: graph.ResHour, Since: hour.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]graph.SeriesPoint{}
	for _, p := range pts {
		got[p.Series] = p
	}
	search := got[analytics.SeriesSearch]
	if search.Count != 4 || search.Sum != 983 || search.Quantile(0.5) != 50 || search.Quantile(0.95) != 1000 || !search.At.Equal(hour) {
		t.Fatalf("search: %+v (p50 %v, p95 %v)", search, search.Quantile(0.5), search.Quantile(0.95))
	}
	if g := got[analytics.SeriesGapsOpen]; g.Count != 2 || g.Sum != 2 {
		t.Fatalf("gaps: %+v", g)
	}
	if f := got["fulfil:substitute:completed"]; f.Count != 1 {
		t.Fatalf("fulfilments: %+v", pts)
	}
	if _, ok := got["fulfil:no_capability:completed"]; ok {
		t.Fatal("a run closed before the sampler started was counted")
	}
}

// A sampler told not to write the shared samples writes its searches only.
func TestSamplerSearchesOnly(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 7, 1, 6, 0, 30, 0, time.UTC)
	runs := fakeRuns{{Verb: "A", Branch: "substitute", Status: "completed", Start: now.Add(-time.Minute), Close: now.Add(-10 * time.Second)}}
	s := analytics.NewSampler(st, runs, graph.DefaultRetention).WithClock(func() time.Time { return now }).SampleShared(false)
	s.Search("hybrid", 20*time.Millisecond, false)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pts, err := st.SeriesPoints(ctx, graph.SeriesQuery{Res: graph.ResMinute})
	if err != nil || len(pts) != 1 || pts[0].Series != analytics.SeriesSearch {
		t.Fatalf("points: %+v %v", pts, err)
	}
}

// Two workers' samplers over one store (two processes on one SQLite
// file) write one shared sample a minute between them: the open gaps once
// a minute and each fulfilment once, whichever flushes first; their
// searches add up.
func TestSamplersShareOneSamplePerMinute(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	var st [2]*sqlite.Store
	for i := range st {
		s, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		st[i] = s
	}
	now := time.Date(2026, 7, 1, 6, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	runs := fakeRuns{
		{Verb: "A", Branch: "substitute", Status: "completed", Start: now.Add(-2 * time.Minute), Close: now.Add(-20 * time.Second)},
		{Verb: "B", Branch: "decompose", Status: "failed", Start: now.Add(-time.Minute), Close: now.Add(40 * time.Second)},
	}
	if _, err := st[0].RecordGap(ctx, graph.GapEvent{Verb: "CARVE_PUMPKIN", At: now}); err != nil {
		t.Fatal(err)
	}
	var samplers [2]*analytics.Sampler
	for i := range samplers {
		samplers[i] = analytics.NewSampler(st[i], runs, graph.DefaultRetention).WithClock(clock)
	}
	// Four minutes; both flush in each, in turn first, the second 10 s
	// after the first, then once more at the same time as it.
	for m := 0; m < 4; m++ {
		start := now
		for k := range 3 {
			now = start.Add(time.Duration(min(k, 1)) * 10 * time.Second)
			s := samplers[(m+k)%2]
			s.Search("hybrid", 10*time.Millisecond, false)
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		now = start.Add(time.Minute)
	}
	pts, err := analytics.SeriesAt(ctx, st[1], graph.SeriesQuery{Res: graph.ResHour, Since: graph.Truncate(now, graph.ResHour)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]graph.SeriesPoint{}
	for _, p := range pts {
		got[p.Series] = p
	}
	if g := got[analytics.SeriesGapsOpen]; g.Count != 4 || g.Sum != 4 {
		t.Errorf("open gaps: %+v; want one sample a minute for 4 minutes", g)
	}
	if f := got["fulfil:substitute:completed"]; f.Count != 1 {
		t.Errorf("fulfilment A: %+v; want counted once", f)
	}
	if f := got["fulfil:decompose:failed"]; f.Count != 1 {
		t.Errorf("fulfilment B: %+v; want counted once", f)
	}
	if s := got[analytics.SeriesSearch]; s.Count != 12 {
		t.Errorf("searches: %+v; want the 12 of both processes", s)
	}
}
