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
