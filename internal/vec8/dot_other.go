//go:build !amd64

package vec8

// HasAsm is false: Dot runs in Go on this architecture.
const HasAsm = false

func dotAsm(a, b []int8) int32 { panic("vec8: dotAsm without assembly") }
