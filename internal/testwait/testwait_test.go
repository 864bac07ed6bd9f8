package testwait_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/internal/testwait"
)

// recorder is a testing.TB whose Fatalf records the message and stops the
// calling goroutine, as t.Fatalf does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

func run(r *recorder, within time.Duration, cond func() error) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	testwait.Eventually(r, within, cond)
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	r := &recorder{TB: t}
	run(r, time.Minute, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if r.failed != "" || calls != 3 {
		t.Fatalf("failed %q after %d calls, want success on the third call", r.failed, calls)
	}
}

func TestEventuallyFailsWithTheLastErrorOncePastTheBound(t *testing.T) {
	calls := 0
	r := &recorder{TB: t}
	run(r, 0, func() error {
		calls++
		return errors.New("still pending")
	})
	if !strings.Contains(r.failed, "still pending") || calls != 1 {
		t.Fatalf("failed %q after %d calls, want the condition's error after one call with a zero bound", r.failed, calls)
	}
}
