package graphtest

import (
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

// testRunClaims: each observed run backs at most one report, only the
// user's own runs of that tool since the window's start count, a report or
// an event without origin backs nothing, and concurrent claims never share
// a run.
func testRunClaims(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	put(t, s,
		mk("fx", "CONVERT_CURRENCY", "FX", "finance", "d", unit(0)),
		mk("wx", "GET_WEATHER", "Weather", "weather", "d", unit(1)),
	)
	since := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	in := since.Add(time.Hour)
	obs := func(user, tool string, ok bool, at time.Time) graph.UsageEvent {
		return graph.UsageEvent{ToolID: tool, UserID: user, Success: ok, At: at, Origin: graph.OriginObserved}
	}
	events := []graph.UsageEvent{
		obs("u1", "fx", true, in),
		obs("u1", "fx", true, in.Add(time.Minute)),
		obs("u1", "fx", false, in.Add(2*time.Minute)),
		obs("u1", "fx", true, since.Add(-time.Second)), // before the window
		obs("u2", "fx", true, in),
		obs("u1", "wx", true, in),
		{ToolID: "fx", UserID: "u1", Success: true, At: in, Origin: graph.OriginReported},
		{ToolID: "fx", UserID: "u1", Success: true, At: in}, // written before origins were kept
	}
	for range 4 {
		events = append(events, obs("u3", "fx", true, in))
	}
	if err := s.RecordUsage(ctx, events); err != nil {
		t.Fatalf("RecordUsage: %v", err)
	}
	claim := func(c graph.RunClaim, want int) {
		t.Helper()
		if c.Since.IsZero() {
			c.Since = since
		}
		got, err := s.ClaimRuns(ctx, c)
		if err != nil || got != want {
			t.Errorf("ClaimRuns(%+v) = %d, %v; want %d", c, got, err, want)
		}
	}
	claim(graph.RunClaim{UserID: "u1", ToolID: "fx", N: 5, Successful: true}, 2)
	claim(graph.RunClaim{UserID: "u1", ToolID: "fx", N: 5, Successful: true}, 0) // each run backs one report
	claim(graph.RunClaim{UserID: "u1", ToolID: "fx", N: 5}, 1)                   // the failed run is left
	claim(graph.RunClaim{UserID: "u1", ToolID: "fx", N: 5}, 0)
	claim(graph.RunClaim{UserID: "u1", ToolID: "fx", N: 5, Since: since.Add(-time.Hour)}, 1) // a wider window reaches the older run
	claim(graph.RunClaim{UserID: "u2", ToolID: "fx", N: 0, Successful: true}, 0)
	claim(graph.RunClaim{UserID: "u2", ToolID: "fx", N: 1, Successful: true}, 1)
	claim(graph.RunClaim{UserID: "u2", ToolID: "wx", N: 1}, 0)
	claim(graph.RunClaim{UserID: "", ToolID: "fx", N: 9}, 0)
	claim(graph.RunClaim{UserID: "u1", ToolID: "wx", N: 9, Since: in.Add(time.Second)}, 0) // the window starts after the run

	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 8 {
		wg.Go(func() {
			n, err := s.ClaimRuns(ctx, graph.RunClaim{UserID: "u3", ToolID: "fx", Since: since, N: 1, Successful: true})
			if err != nil {
				t.Errorf("concurrent ClaimRuns: %v", err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != 4 {
		t.Errorf("8 concurrent claims of one run each over 4 runs claimed %d; want 4", total)
	}
	// Claims change no evidence.
	u, err := s.Usage(ctx, []string{"fx"})
	if err != nil || u["fx"].Uses != 11 || u["fx"].Successes != 10 {
		t.Errorf("fx usage after claims = %+v, %v; want 11 uses, 10 successes", u["fx"], err)
	}
}
