//go:build !amd64

package use

// hasSgemmAsm is false: dense layers use the portable kernel here.
const hasSgemmAsm = false

func sgemm4x16(k int, a *float32, lda int, b *float32, c *float32, ldc int) {
	panic("use: sgemm4x16 without assembly")
}

func sgemm6x16(k int, a *float32, lda int, b *float32, c *float32, ldc int) {
	panic("use: sgemm6x16 without assembly")
}
