// Package memtrim hands the Go heap's free pages back to the operating
// system after bursts of work. The runtime keeps freed pages for reuse and
// returns them slowly; after a batch registration or a burst of searches
// (embedding buffers, decoded manifests) that leaves the resident set
// hundreds of megabytes above the live heap until the next burst reuses
// them.
package memtrim

import (
	"runtime/debug"
	"sync"
	"time"
)

// Trimmer frees memory once work has been quiet for a while: Soon arms it,
// and every further Soon within the quiet period postpones it, so a stream
// of batches is trimmed once, after the last. A trim (a full collection)
// runs at most once per minGap, so a client that searches every few seconds
// does not pay for one after each search.
type Trimmer struct {
	quiet time.Duration
	// minGap is the least time between two trims (New sets 10 s).
	minGap time.Duration
	free   func()

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	runs    int
	last    time.Time
}

// New returns a Trimmer that frees after quiet without a Soon (at least
// 100 ms), and at most every 10 seconds.
func New(quiet time.Duration) *Trimmer {
	return &Trimmer{quiet: max(quiet, 100*time.Millisecond), minGap: 10 * time.Second, free: debug.FreeOSMemory}
}

// delay is how long a trim armed now waits; the caller holds mu.
func (t *Trimmer) delay() time.Duration {
	return max(t.quiet, time.Until(t.last.Add(t.minGap)))
}

// Soon schedules a trim after the quiet period. It is safe on a nil
// Trimmer (no trimming).
func (t *Trimmer) Soon() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	if t.timer != nil {
		t.timer.Reset(t.delay())
		return
	}
	t.timer = time.AfterFunc(t.delay(), t.run)
}

func (t *Trimmer) run() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	t.free()
	t.mu.Lock()
	t.runs++
	t.last = time.Now()
	t.mu.Unlock()
}

// Runs reports how many trims have run to the end.
func (t *Trimmer) Runs() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.runs
}

// Stop cancels a pending trim; later Soon calls do nothing.
func (t *Trimmer) Stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
	}
}

// Loads lowers the collector's target (GOGC) while a process's start-up
// loads run in the background, and restores it when the last ends. Those
// loads read the whole catalogue and make garbage far faster than they
// keep data: with the default target the heap grows to twice the live
// heap (or to the soft memory limit) before each collection, and at
// 100,000 tools that was the resident peak after every restart. A lower
// target collects more often while they run, keeping the heap nearer its
// live size, for a little more CPU in the background.
type Loads struct {
	pct   int
	setGC func(int) int
	ended func()

	mu      sync.Mutex
	running int
	old     int
}

// NewLoads returns Loads that set GOGC to pct while any load runs, and
// call ended (e.g. a Trimmer's Soon) when the last one ends.
func NewLoads(pct int, ended func()) *Loads {
	return &Loads{pct: pct, setGC: debug.SetGCPercent, ended: ended}
}

// Begin marks a load as running; the returned end marks it ended (calling
// it again does nothing). It is safe on a nil Loads (nothing changes).
func (l *Loads) Begin() (end func()) {
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	if l.running == 0 {
		l.old = l.setGC(l.pct)
		if l.old >= 0 && l.old < l.pct {
			l.setGC(l.old) // already lower (GOGC): keep it
		}
	}
	l.running++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.running--
			last := l.running == 0
			if last {
				l.setGC(l.old)
			}
			l.mu.Unlock()
			if last && l.ended != nil {
				l.ended()
			}
		})
	}
}
