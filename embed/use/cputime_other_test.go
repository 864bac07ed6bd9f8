//go:build !unix

package use

import "time"

// processCPU is unavailable here.
func processCPU() (time.Duration, bool) { return 0, false }
