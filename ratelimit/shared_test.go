package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
)

// twoReplicas opens one SQLite file twice, as two processes do, and
// returns a limiter over each, both on the clock *now.
func twoReplicas(t testing.TB, cfg Config, now *time.Time) (*Limiter, *Limiter, graph.RateCounts) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	var stores []*sqlite.Store
	for i := 0; i < 2; i++ {
		s, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	clock := func() time.Time { return *now }
	a := New(cfg, nil).Share(stores[0], func(err error) { t.Errorf("store error: %v", err) })
	b := New(cfg, nil).Share(stores[1], func(err error) { t.Errorf("store error: %v", err) })
	a.now, b.now = clock, clock
	return a, b, stores[0]
}

// windowStart is the start of a counting window, far from any boundary
// the test crosses by accident.
var windowStart = time.Unix(0, 0).Add(29_000_000 * Window).UTC()

func TestLimitsCountAcrossReplicas(t *testing.T) {
	now := windowStart.Add(30 * time.Second)
	a, b, _ := twoReplicas(t, Config{SearchPerMinute: 10}, &now)
	alice := identity.Principal{Subject: "key:alice"}
	for i := 0; i < 10; i++ {
		l := a
		if i%2 == 1 {
			l = b
		}
		if err := l.Take(Search, alice, ""); err != nil {
			t.Fatalf("call %d of 10: %v", i+1, err)
		}
	}
	for _, l := range []*Limiter{a, b} {
		err := l.Take(Search, alice, "")
		var le *Error
		if !errors.As(err, &le) || le.RetryAfter <= 0 {
			t.Fatalf("the 11th call, through either replica, must be refused: %v", err)
		}
	}
	if err := b.Take(Search, identity.Principal{Subject: "key:bob"}, ""); err != nil {
		t.Errorf("another caller has its own count: %v", err)
	}
	if err := a.Take(Execute, alice, ""); err != nil {
		t.Errorf("another class has its own count: %v", err)
	}

	// Half way through the next window, half of the previous window's 10
	// still weigh: 5 more calls, then a refusal whose Retry-After is
	// honest: a call at that time is allowed.
	now = windowStart.Add(Window + 30*time.Second)
	for i := 0; i < 5; i++ {
		if err := []*Limiter{a, b}[i%2].Take(Search, alice, ""); err != nil {
			t.Fatalf("next window, call %d of 5: %v", i+1, err)
		}
	}
	err := a.Take(Search, alice, "")
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("6th call half way through the next window: %v, want a refusal", err)
	}
	now = now.Add(le.RetryAfter + time.Millisecond)
	if err := b.Take(Search, alice, ""); err != nil {
		t.Errorf("after Retry-After %s the call must pass: %v", le.RetryAfter, err)
	}
}

func TestRefusedCallsDoNotCount(t *testing.T) {
	now := windowStart.Add(10 * time.Second)
	a, _, store := twoReplicas(t, Config{ExecutePerMinute: 3}, &now)
	p := identity.Principal{Subject: "key:k"}
	for i := 0; i < 10; i++ {
		_ = a.Take(Execute, p, "")
	}
	w := now.UnixNano() / int64(Window)
	if cur, _, _ := store.AddRateCount(context.Background(), "execute|key:k", w, 0); cur != 3 {
		t.Errorf("stored count after 3 allowed and 7 refused calls = %d, want 3", cur)
	}
}

func TestOldWindowsExpire(t *testing.T) {
	now := windowStart.Add(time.Second)
	a, _, store := twoReplicas(t, Config{}, &now)
	w0 := now.UnixNano() / int64(Window)
	_ = a.Take(Search, identity.Principal{Subject: "key:old"}, "")
	now = now.Add(2 * Window)
	_ = a.Take(Search, identity.Principal{Subject: "key:new"}, "")
	if cur, _, _ := store.AddRateCount(context.Background(), "search|key:old", w0, 0); cur != 0 {
		t.Errorf("a window two windows old is still stored (count %d)", cur)
	}
}

// failing is a store that is down.
type failing struct{}

func (failing) AddRateCount(context.Context, string, int64, int) (int64, int64, error) {
	return 0, 0, errors.New("store down")
}
func (failing) ExpireRateCounts(context.Context, int64) (int, error) {
	return 0, errors.New("store down")
}

func TestStoreFailureCountsLocally(t *testing.T) {
	var errs int
	l := New(Config{VerbsPerMinute: 2}, nil).Share(failing{}, func(error) { errs++ })
	now := windowStart.Add(time.Second)
	l.now = func() time.Time { return now }
	p := identity.Principal{Subject: "key:k"}
	for i := 0; i < 2; i++ {
		if err := l.Take(Verbs, p, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Take(Verbs, p, ""); err == nil {
		t.Error("with the store down the process still limits on its own")
	}
	if errs == 0 {
		t.Error("store failures are reported")
	}
}

func TestLongSubjectsAreCounted(t *testing.T) {
	l := New(Config{SearchPerMinute: 1}, nil)
	long := identity.Principal{Subject: "oidc:" + string(make([]byte, 600))}
	if err := l.Take(Search, long, ""); err != nil {
		t.Fatal(err)
	}
	if err := l.Take(Search, long, ""); err == nil {
		t.Error("a caller with a long subject is limited like any other")
	}
}

// counting wraps a store and counts its round trips.
type counting struct {
	graph.RateCounts
	adds int
}

func (c *counting) AddRateCount(ctx context.Context, key string, window int64, delta int) (int64, int64, error) {
	c.adds++
	return c.RateCounts.AddRateCount(ctx, key, window, delta)
}

// TestLeasesNeverOverrunTheLimit: with the default search limit (600, in
// leases of 12), two replicas admit together no more than the limit and
// at most a lease's unused rest less per replica, while calling the store
// about once per lease.
func TestLeasesNeverOverrunTheLimit(t *testing.T) {
	now := windowStart.Add(20 * time.Second)
	a, b, store := twoReplicas(t, Config{}, &now)
	ca := &counting{RateCounts: a.shared}
	a.shared = ca
	p := identity.Principal{Subject: "key:busy"}
	allowed := 0
	for i := 0; i < 700; i++ {
		if err := []*Limiter{a, b}[i%3%2].Take(Search, p, ""); err == nil {
			allowed++
		}
	}
	lease := LeaseSize(DefaultSearchPerMinute)
	if allowed > DefaultSearchPerMinute || allowed < DefaultSearchPerMinute-2*(lease-1) {
		t.Errorf("two replicas admitted %d calls under a limit of %d (leases of %d)", allowed, DefaultSearchPerMinute, lease)
	}
	w := now.UnixNano() / int64(Window)
	if cur, _, _ := store.AddRateCount(context.Background(), "search|key:busy", w, 0); cur > DefaultSearchPerMinute {
		t.Errorf("the store counts %d calls, over the limit", cur)
	}
	// Replica a served 2 of every 3 calls: about 400 while there was
	// room, in leases of 12, then one round trip per refused call (each
	// giving its lease back in the same call's second trip).
	if ca.adds > 400/lease+2*(700-allowed)+10 {
		t.Errorf("replica a made %d store calls for its calls; leases spare round trips", ca.adds)
	}
	// The next window starts with no lease: the previous window's counts
	// weigh on the first call there.
	now = windowStart.Add(Window + 59*time.Second)
	if err := a.Take(Search, p, ""); err != nil {
		t.Errorf("near the end of the next window the previous one hardly weighs: %v", err)
	}
}

// BenchmarkTake is the cost a limited request pays: counting in memory
// (one process) and in a shared SQLite store.
func BenchmarkTake(b *testing.B) {
	p := identity.Principal{Subject: "key:bench"}
	b.Run("memory", func(b *testing.B) {
		l := New(Config{SearchPerMinute: -1}, nil)
		l.cfg.SearchPerMinute = 1 << 30
		for i := 0; i < b.N; i++ {
			_ = l.Take(Search, p, "")
		}
	})
	// Callers make 500 calls each, under the default limit of 600, so the
	// store is called once per lease (12 calls) or per call (lease 1).
	for _, limit := range []int{DefaultSearchPerMinute, 50} {
		b.Run(fmt.Sprintf("sqlite-shared/lease-%d", LeaseSize(limit)), func(b *testing.B) {
			now := time.Now()
			l, _, _ := twoReplicas(b, Config{SearchPerMinute: limit}, &now)
			l.now = time.Now
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				perCaller := min(500, limit-1)
				_ = l.Take(Search, identity.Principal{Subject: fmt.Sprintf("key:bench%d", i/perCaller)}, "")
			}
		})
	}
}

// TestConcurrentCallsGetTheWholeLimit: eight goroutines of one caller on
// one replica over a shared store are admitted the whole limit, no more
// and no fewer: the leases concurrent calls take add up rather than
// replace each other (which left calls counted in the store that no one
// could use, so the caller was refused before its limit).
func TestConcurrentCallsGetTheWholeLimit(t *testing.T) {
	now := windowStart.Add(20 * time.Second)
	a, _, _ := twoReplicas(t, Config{}, &now)
	p := identity.Principal{Subject: "key:parallel"}
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if a.Take(Search, p, "") == nil {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != DefaultSearchPerMinute {
		t.Errorf("8 concurrent callers were admitted %d calls under a limit of %d", allowed, DefaultSearchPerMinute)
	}
}
