package sqlite

import "golang.org/x/sys/cpu"

// hasDot8Asm reports whether dot8Asm can run on this CPU.
var hasDot8Asm = cpu.X86.HasAVX2

// dot8Asm is dot8 for len(a) == len(b), a multiple of 32 (dot8_amd64.s).
//
//go:noescape
func dot8Asm(a, b []int8) int32
