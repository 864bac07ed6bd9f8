package vec8

import "golang.org/x/sys/cpu"

// HasAsm reports whether dotAsm can run on this CPU.
var HasAsm = cpu.X86.HasAVX2

// dotAsm is Dot for len(a) == len(b), a multiple of 32 (dot_amd64.s).
//
//go:noescape
func dotAsm(a, b []int8) int32
