// Package testwait is the one way Toolsmith's tests wait for something that
// happens asynchronously (a workflow's end, a catalogue update, a pending
// review): poll a condition until it holds or a bound passes. It is for
// tests only; no production package imports it.
package testwait

import (
	"testing"
	"time"
)

// Interval is how long Eventually waits between two calls of its condition.
const Interval = 100 * time.Millisecond

// Eventually calls cond every Interval until it returns nil, and fails the
// test with cond's last error once within has passed. cond may call
// t.Fatal itself for an error no retry will cure.
func Eventually(t testing.TB, within time.Duration, cond func() error) {
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
		time.Sleep(Interval)
	}
}
