//go:build !unix

package registry_test

import "time"

// processCPU is unavailable here.
func processCPU() (time.Duration, bool) { return 0, false }
