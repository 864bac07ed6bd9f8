#include "textflag.h"

// func dotAsm(a, b []int8) int32
// Requires AVX2; len(a) == len(b), a multiple of 32. Each step widens 16
// int8 pairs to int16 (VPMOVSXBW), multiplies and adds adjacent products
// into int32 (VPMADDWD) and accumulates in two registers. Products are at
// most 127², so int32 sums cannot overflow below 2^17 elements.
TEXT ·dotAsm(SB), NOSPLIT, $0-52
	MOVQ  a_base+0(FP), SI
	MOVQ  b_base+24(FP), DI
	MOVQ  a_len+8(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  AX, AX
	TESTQ CX, CX
	JE    done

loop:
	VPMOVSXBW (SI)(AX*1), Y2
	VPMOVSXBW (DI)(AX*1), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI)(AX*1), Y4
	VPMOVSXBW 16(DI)(AX*1), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, AX
	CMPQ      AX, CX
	JB        loop

done:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+48(FP)
	RET
