package e2e

import (
	"testing"
	"time"
)

// eventually calls cond every 100 ms until it returns nil, and fails the
// test with cond's last error once within has passed. It is the one way
// these tests wait for what happens asynchronously (a workflow's end, a
// schedule's run, visibility, the query log, a catalogue update). cond may
// call t.Fatal itself for an error no retry will cure.
func eventually(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %v", within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
