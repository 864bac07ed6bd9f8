package memtrim

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestSoonTrimsOnceAfterTheLastCall(t *testing.T) {
	var freed atomic.Int32
	tr := New(time.Second) // far longer than the gaps between calls, even on a loaded machine
	tr.minGap = 0
	tr.free = func() { freed.Add(1) }
	for k := 0; k < 5; k++ {
		tr.Soon()
		time.Sleep(20 * time.Millisecond)
	}
	if freed.Load() != 0 {
		t.Fatal("trimmed while calls kept coming")
	}
	deadline := time.Now().Add(10 * time.Second)
	for freed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if freed.Load() != 1 || tr.Runs() != 1 {
		t.Fatalf("freed %d times, want 1", freed.Load())
	}
	tr.Soon() // a later burst trims again
	for freed.Load() == 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if freed.Load() != 2 {
		t.Fatalf("freed %d times after a second burst, want 2", freed.Load())
	}
}

func TestTrimsAreSpacedByMinGap(t *testing.T) {
	var freed atomic.Int32
	tr := New(100 * time.Millisecond)
	tr.minGap = 2 * time.Second
	tr.free = func() { freed.Add(1) }
	tr.Soon()
	deadline := time.Now().Add(10 * time.Second)
	for freed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	first := time.Now()
	tr.Soon() // within the gap: waits for it
	for freed.Load() == 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if freed.Load() != 2 {
		t.Fatalf("freed %d times, want 2", freed.Load())
	}
	if gap := time.Since(first); gap < 1500*time.Millisecond {
		t.Fatalf("the second trim ran %v after the first, want about the 2 s gap", gap)
	}
}

func TestStopCancels(t *testing.T) {
	var freed atomic.Int32
	tr := New(100 * time.Millisecond)
	tr.free = func() { freed.Add(1) }
	tr.Soon()
	tr.Stop()
	tr.Soon()
	time.Sleep(300 * time.Millisecond)
	if freed.Load() != 0 {
		t.Fatalf("freed %d times after Stop", freed.Load())
	}
	var none *Trimmer
	none.Soon() // nil-safe
	none.Stop()
}
