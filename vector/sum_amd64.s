//go:build amd64 && !purego

#include "textflag.h"
#include "reduce_amd64.h"

// func sumAVX2(x *float32, n int) float32
//
// Benchmark yardstick only: sums x[:n] (n a multiple of 32) with four 8-lane
// accumulators, the same load pattern as dotBatchAVX2 minus the query, so it
// measures how fast one core can stream memory.
TEXT ·sumAVX2(SB), NOSPLIT, $0-20
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   BX, BX
	CMPQ   BX, CX
	JGE    reduce

loop:
	VADDPS (SI)(BX*4), Y0, Y0
	VADDPS 32(SI)(BX*4), Y1, Y1
	VADDPS 64(SI)(BX*4), Y2, Y2
	VADDPS 96(SI)(BX*4), Y3, Y3
	ADDQ   $32, BX
	CMPQ   BX, CX
	JLT    loop

reduce:
	REDUCE4
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET
