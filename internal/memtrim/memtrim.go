// Package memtrim hands the Go heap's free pages back to the operating
// system after bulk work. The runtime keeps freed pages for reuse and
// returns them slowly; after a batch registration (embedding buffers, decoded
// manifests) that leaves the resident set hundreds of megabytes above the
// live heap until the next burst reuses them.
package memtrim

import (
	"runtime/debug"
	"sync"
	"time"
)

// Trimmer frees memory once work has been quiet for a while: Soon arms it,
// and every further Soon within the quiet period postpones it, so a stream
// of batches is trimmed once, after the last.
type Trimmer struct {
	quiet time.Duration
	free  func()

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	runs    int
}

// New returns a Trimmer that frees after quiet without a Soon (at least
// 100 ms).
func New(quiet time.Duration) *Trimmer {
	return &Trimmer{quiet: max(quiet, 100*time.Millisecond), free: debug.FreeOSMemory}
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
		t.timer.Reset(t.quiet)
		return
	}
	t.timer = time.AfterFunc(t.quiet, t.run)
}

func (t *Trimmer) run() {
	t.mu.Lock()
	if t.stopped {
		t.mu.Unlock()
		return
	}
	t.runs++
	t.mu.Unlock()
	t.free()
}

// Runs reports how many trims have run.
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
