//go:build !unix

// Package cputime reads the CPU time the process has used, which the
// benchmarks report per operation beside wall-clock percentiles: on a
// shared machine wall time also measures the scheduler.
package cputime

import "time"

// Process is not available on this platform: it returns false.
func Process() (time.Duration, bool) { return 0, false }
