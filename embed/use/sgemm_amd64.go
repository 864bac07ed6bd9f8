package use

import "golang.org/x/sys/cpu"

// hasSgemmAsm reports whether sgemm4x16 can run on this CPU.
var hasSgemmAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// sgemm4x16 writes four rows of a times one packed panel (sgemm_amd64.s):
// c[r*ldc+j] = Σ_p a[r*lda+p]·b[p*16+j] for r < 4, j < 16. The caller
// guarantees the bounds.
//
//go:noescape
func sgemm4x16(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// sgemm6x16 is sgemm4x16 for six rows of a (sgemm_amd64.s).
//
//go:noescape
func sgemm6x16(k int, a *float32, lda int, b *float32, c *float32, ldc int)
