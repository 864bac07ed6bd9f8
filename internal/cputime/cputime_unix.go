//go:build unix

// Package cputime reads the CPU time the process has used, which the
// benchmarks report per operation beside wall-clock percentiles: on a
// shared machine wall time also measures the scheduler.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time (user + system) the process has used; false
// where the platform does not say.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
