//go:build amd64 && !purego

#include "textflag.h"

// func dotBatchAVX2(q, rows *float32, dim, n int, out *float32)
//
// For each of n rows: four 8-lane FMA accumulators over 32 floats per
// iteration (enough independent chains to cover FMA latency), then 8 floats
// per iteration, a horizontal sum, and a scalar tail for dim % 8.
// Register use: AX q, SI row, DX dim, CX rows left, R8 out, BX column,
// R9 dim rounded down to 32, R10 dim rounded down to 8.
TEXT ·dotBatchAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), AX
	MOVQ rows+8(FP), SI
	MOVQ dim+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), R8
	MOVQ DX, R9
	ANDQ $-32, R9
	MOVQ DX, R10
	ANDQ $-8, R10

row:
	TESTQ CX, CX
	JZ    done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   BX, BX
	CMPQ   BX, R9
	JGE    loop8check

loop32:
	VMOVUPS     (AX)(BX*4), Y4
	VMOVUPS     32(AX)(BX*4), Y5
	VMOVUPS     64(AX)(BX*4), Y6
	VMOVUPS     96(AX)(BX*4), Y7
	VFMADD231PS (SI)(BX*4), Y4, Y0
	VFMADD231PS 32(SI)(BX*4), Y5, Y1
	VFMADD231PS 64(SI)(BX*4), Y6, Y2
	VFMADD231PS 96(SI)(BX*4), Y7, Y3
	ADDQ        $32, BX
	CMPQ        BX, R9
	JLT         loop32

loop8check:
	CMPQ BX, R10
	JGE  reduce

loop8:
	VMOVUPS     (AX)(BX*4), Y4
	VFMADD231PS (SI)(BX*4), Y4, Y0
	ADDQ        $8, BX
	CMPQ        BX, R10
	JLT         loop8

reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0

tail:
	CMPQ        BX, DX
	JGE         store
	VMOVSS      (AX)(BX*4), X1
	VFMADD231SS (SI)(BX*4), X1, X0
	INCQ        BX
	JMP         tail

store:
	VMOVSS X0, (R8)
	ADDQ   $4, R8
	LEAQ   (SI)(DX*4), SI
	DECQ   CX
	JMP    row

done:
	VZEROUPPER
	RET
