package graphtest

import (
	"errors"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// testSeries: points add up in their bucket, read back by name, prefix and
// time, and compaction rolls minutes into hours and hours into days
// (totals kept), drops old days, and is bounded.
func testSeries(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var ss graph.Series = s
	t0 := time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC)
	hist := func(i int, n float64) []float64 {
		h := make([]float64, len(graph.LatencyBucketsMs))
		h[i] = n
		return h
	}
	for _, bad := range []graph.SeriesPoint{
		{Series: "", Res: graph.ResMinute, At: t0},
		{Series: "x", Res: "week", At: t0},
		{Series: "x", Res: graph.ResMinute, At: t0.Add(time.Second)},
		{Series: "x", Res: graph.ResMinute, At: t0, Hist: []float64{1}},
	} {
		if err := ss.AddSeriesPoints(ctx, []graph.SeriesPoint{bad}); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("bad point %+v: %v", bad, err)
		}
	}
	// Two writers of the same minute add up; another minute stays apart.
	pts := []graph.SeriesPoint{
		{Series: "search", Res: graph.ResMinute, At: t0, Count: 2, Sum: 30, Hist: hist(2, 2)},
		{Series: "search", Res: graph.ResMinute, At: t0, Count: 1, Sum: 400, Hist: hist(6, 1)},
		{Series: "search", Res: graph.ResMinute, At: t0.Add(time.Minute), Count: 5, Sum: 50, Hist: hist(1, 5)},
		{Series: "fulfil:substitute:completed", Res: graph.ResMinute, At: t0.Add(2 * time.Minute), Count: 1},
		{Series: "gaps.open", Res: graph.ResMinute, At: t0, Count: 1, Sum: 4},
	}
	if err := ss.AddSeriesPoints(ctx, pts); err != nil {
		t.Fatal(err)
	}
	got, err := ss.SeriesPoints(ctx, graph.SeriesQuery{Series: []string{"search"}, Res: graph.ResMinute})
	if err != nil || len(got) != 2 || got[0].Count != 3 || got[0].Sum != 430 || got[0].Hist[2] != 2 || got[0].Hist[6] != 1 || !got[0].At.Equal(t0) || got[1].Count != 5 {
		t.Fatalf("search points: %+v %v", got, err)
	}
	if q := got[0].Quantile(0.5); q != graph.LatencyBucketsMs[2] {
		t.Fatalf("p50 %v", q)
	}
	if got, err := ss.SeriesPoints(ctx, graph.SeriesQuery{Prefix: "fulfil:", Res: graph.ResMinute}); err != nil || len(got) != 1 || got[0].Series != "fulfil:substitute:completed" {
		t.Fatalf("prefix: %+v %v", got, err)
	}
	if got, err := ss.SeriesPoints(ctx, graph.SeriesQuery{Res: graph.ResMinute, Since: t0.Add(time.Minute), Until: t0.Add(2 * time.Minute)}); err != nil || len(got) != 1 || got[0].Count != 5 {
		t.Fatalf("time window: %+v %v", got, err)
	}
	// Two hours later, with minutes kept for an hour: the 06:xx minutes
	// become one 06:00 hour point with the same totals.
	r := graph.Retention{Minutes: time.Hour, Hours: 48 * time.Hour, Days: 10 * 24 * time.Hour}
	n, err := ss.CompactSeries(ctx, t0.Add(2*time.Hour+30*time.Minute), r)
	if err != nil || n != 4 {
		t.Fatalf("compact: %d removed, %v", n, err)
	}
	if left, _ := ss.SeriesPoints(ctx, graph.SeriesQuery{Res: graph.ResMinute}); len(left) != 0 {
		t.Fatalf("minutes left after compaction: %+v", left)
	}
	hours, err := ss.SeriesPoints(ctx, graph.SeriesQuery{Series: []string{"search"}, Res: graph.ResHour})
	if err != nil || len(hours) != 1 || hours[0].Count != 8 || hours[0].Sum != 480 || hours[0].Hist[1] != 5 || !hours[0].At.Equal(t0) {
		t.Fatalf("hour points: %+v %v", hours, err)
	}
	// Compacting again changes nothing (whole buckets only).
	if n, err := ss.CompactSeries(ctx, t0.Add(2*time.Hour+30*time.Minute), r); err != nil || n != 0 {
		t.Fatalf("second compaction: %d, %v", n, err)
	}
	// Three days later hours become days; eleven days later days are dropped.
	if _, err := ss.CompactSeries(ctx, t0.Add(72*time.Hour), r); err != nil {
		t.Fatal(err)
	}
	days, err := ss.SeriesPoints(ctx, graph.SeriesQuery{Res: graph.ResDay})
	if err != nil || len(days) != 3 || !days[2].At.Equal(graph.Truncate(t0, graph.ResDay)) || days[2].Series != "search" || days[2].Count != 8 {
		t.Fatalf("day points: %+v %v", days, err)
	}
	if _, err := ss.CompactSeries(ctx, t0.Add(12*24*time.Hour), r); err != nil {
		t.Fatal(err)
	}
	if days, _ := ss.SeriesPoints(ctx, graph.SeriesQuery{Res: graph.ResDay}); len(days) != 0 {
		t.Fatalf("days kept past retention: %+v", days)
	}
	// Bounded: a day of minutes for one series keeps at most the retained
	// minutes plus the rolled-up hours.
	var day []graph.SeriesPoint
	for i := range 24 * 60 {
		day = append(day, graph.SeriesPoint{Series: "load", Res: graph.ResMinute, At: t0.Add(time.Duration(i) * time.Minute), Count: 1})
	}
	if err := ss.AddSeriesPoints(ctx, day); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.CompactSeries(ctx, t0.Add(24*time.Hour), r); err != nil {
		t.Fatal(err)
	}
	mins, _ := ss.SeriesPoints(ctx, graph.SeriesQuery{Series: []string{"load"}, Res: graph.ResMinute})
	hrs, _ := ss.SeriesPoints(ctx, graph.SeriesQuery{Series: []string{"load"}, Res: graph.ResHour})
	var total float64
	for _, p := range append(mins, hrs...) {
		total += p.Count
	}
	if len(mins) != 60 || len(hrs) != 23 || total != 24*60 {
		t.Fatalf("a day of minutes kept %d minutes and %d hours, total %v", len(mins), len(hrs), total)
	}
}
