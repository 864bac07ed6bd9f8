package graphtest

import (
	"errors"
	"sync"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func testRateCounts(t *testing.T, open func(*testing.T) graph.Store) {
	var rc graph.RateCounts = fresh(t, open)
	RateCountsContract(t, rc)
}

// RateCountsContract checks a graph.RateCounts: counts per key and window,
// the previous window's count, give-backs, concurrent adds never lost, and
// expiry. graph.MemoryRateCounts passes it too.
func RateCountsContract(t *testing.T, rc graph.RateCounts) {
	t.Helper()
	if cur, prev, err := rc.AddRateCount(ctx, "search|alice", 100, 1); err != nil || cur != 1 || prev != 0 {
		t.Fatalf("first add = %d, %d, %v; want 1, 0", cur, prev, err)
	}
	rc.AddRateCount(ctx, "search|alice", 100, 2)
	if cur, prev, _ := rc.AddRateCount(ctx, "search|alice", 101, 1); cur != 1 || prev != 3 {
		t.Errorf("next window = %d, %d; want 1 and the previous window's 3", cur, prev)
	}
	if cur, _, _ := rc.AddRateCount(ctx, "search|alice", 101, -1); cur != 0 {
		t.Errorf("give back = %d, want 0", cur)
	}
	if cur, prev, _ := rc.AddRateCount(ctx, "search|bob", 101, 1); cur != 1 || prev != 0 {
		t.Errorf("another key = %d, %d; want its own counts 1, 0", cur, prev)
	}
	if _, _, err := rc.AddRateCount(ctx, "", 1, 1); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("empty key: err = %v, want ErrInvalid", err)
	}
	// Adds from many goroutines (replicas do the same through the store)
	// are never lost.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, _, err := rc.AddRateCount(ctx, "execute|carol", 102, 1); err != nil {
					t.Errorf("concurrent add: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if cur, _, _ := rc.AddRateCount(ctx, "execute|carol", 102, 0); cur != 80 {
		t.Errorf("after 80 concurrent adds the count is %d", cur)
	}
	n, err := rc.ExpireRateCounts(ctx, 101)
	if err != nil || n != 1 {
		t.Fatalf("ExpireRateCounts(101) = %d, %v; want 1 (alice's window 100)", n, err)
	}
	if cur, prev, _ := rc.AddRateCount(ctx, "search|alice", 101, 0); cur != 0 || prev != 0 {
		t.Errorf("after expiry = %d, %d; want window 101 kept (0) and window 100 gone", cur, prev)
	}
	if cur, _, _ := rc.AddRateCount(ctx, "execute|carol", 102, 0); cur != 80 {
		t.Errorf("expiry removed a later window: %d", cur)
	}
}
