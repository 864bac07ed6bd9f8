package memtrim

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The tests run in a synctest bubble: its clock is fake and only moves when
// every goroutine in the bubble is blocked, so each trim's moment is exact
// and no test sleeps for real.

func TestSoonTrimsOnceAfterTheLastCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var freed atomic.Int32
		tr := New(time.Second)
		tr.minGap = 0
		tr.free = func() { freed.Add(1) }
		for range 5 {
			tr.Soon()
			time.Sleep(200 * time.Millisecond)
		}
		// The last Soon was 200 ms ago; the trim is due 1 s after it.
		time.Sleep(799 * time.Millisecond)
		synctest.Wait()
		if freed.Load() != 0 {
			t.Fatal("trimmed before the quiet period after the last call ended")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if freed.Load() != 1 || tr.Runs() != 1 {
			t.Fatalf("freed %d times (runs %d) a quiet period after the last call, want 1", freed.Load(), tr.Runs())
		}
		tr.Soon() // a later burst trims again
		time.Sleep(time.Second)
		synctest.Wait()
		if freed.Load() != 2 || tr.Runs() != 2 {
			t.Fatalf("freed %d times (runs %d) after a second burst, want 2", freed.Load(), tr.Runs())
		}
	})
}

func TestTrimsAreSpacedByMinGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var freed atomic.Int32
		tr := New(100 * time.Millisecond)
		tr.minGap = 2 * time.Second
		tr.free = func() { freed.Add(1) }
		tr.Soon()
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if freed.Load() != 1 {
			t.Fatalf("freed %d times after the quiet period, want 1", freed.Load())
		}
		first := time.Now()
		tr.Soon() // within the gap: waits for it, not just the quiet period
		time.Sleep(2*time.Second - time.Millisecond)
		synctest.Wait()
		if freed.Load() != 1 {
			t.Fatalf("the second trim ran %v after the first, before the 2 s gap", time.Since(first))
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if freed.Load() != 2 {
			t.Fatalf("freed %d times once the gap passed, want 2", freed.Load())
		}
	})
}

func TestStopCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var freed atomic.Int32
		tr := New(100 * time.Millisecond)
		tr.free = func() { freed.Add(1) }
		tr.Soon()
		tr.Stop()
		tr.Soon()
		time.Sleep(time.Hour)
		synctest.Wait()
		if freed.Load() != 0 {
			t.Fatalf("freed %d times after Stop", freed.Load())
		}
		var none *Trimmer
		none.Soon() // nil-safe
		none.Stop()
	})
}

// TestLoadsLowerGCWhileRunning: the target drops at the first load, stays
// down while any runs (an end called twice counts once), returns to what
// it was at the last end, which calls ended once; a lower GOGC is kept.
func TestLoadsLowerGCWhileRunning(t *testing.T) {
	gc, ended := 100, 0
	l := &Loads{pct: 50, setGC: func(p int) int { old := gc; gc = p; return old }, ended: func() { ended++ }}
	endA := l.Begin()
	endB := l.Begin()
	if gc != 50 {
		t.Fatalf("GOGC while loading = %d, want 50", gc)
	}
	endA()
	endA()
	if gc != 50 || ended != 0 {
		t.Fatalf("after one of two ends (twice): GOGC %d, ended %d; want 50, 0", gc, ended)
	}
	endB()
	if gc != 100 || ended != 1 {
		t.Fatalf("after the last end: GOGC %d, ended %d; want 100, 1", gc, ended)
	}
	gc = 30
	end := l.Begin()
	if gc != 30 {
		t.Errorf("GOGC 30 became %d while loading; a lower target is kept", gc)
	}
	end()
	if gc != 30 || ended != 2 {
		t.Errorf("after a load under GOGC 30: GOGC %d, ended %d; want 30, 2", gc, ended)
	}
	var none *Loads
	none.Begin()()
}
