//go:build !amd64

package sqlite

// hasDot8Asm is false: dot8 runs in Go on this architecture.
const hasDot8Asm = false

func dot8Asm(a, b []int8) int32 { panic("sqlite: dot8Asm without assembly") }
