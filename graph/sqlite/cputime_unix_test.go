//go:build unix

package sqlite

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used. The
// search benchmarks report it per op next to wall-clock percentiles, because
// on a shared machine wall time also measures the scheduler.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
