//go:build amd64 && !purego

#include "textflag.h"
#include "reduce_amd64.h"

// func dotBatchF16AVX2(q *float32, rows *uint16, dim, n int, out *float32)
//
// dotBatchAVX2 over half-precision rows: VCVTPH2PS widens 8 halves of a row
// to 8 floats (F16C), which the FMA multiplies with the query's floats. The
// same four accumulators over 32 components per iteration, 8 per iteration,
// horizontal sum, and a scalar tail for dim % 8 that widens one half at a
// time, so a row is never read past its end.
// Register use: AX q, SI row, DX dim, CX rows left, R8 out, BX column,
// R9 dim rounded down to 32, R10 dim rounded down to 8, R11 one half.
TEXT ·dotBatchF16AVX2(SB), NOSPLIT, $0-40
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
	VCVTPH2PS   (SI)(BX*2), Y4
	VCVTPH2PS   16(SI)(BX*2), Y5
	VCVTPH2PS   32(SI)(BX*2), Y6
	VCVTPH2PS   48(SI)(BX*2), Y7
	VFMADD231PS (AX)(BX*4), Y4, Y0
	VFMADD231PS 32(AX)(BX*4), Y5, Y1
	VFMADD231PS 64(AX)(BX*4), Y6, Y2
	VFMADD231PS 96(AX)(BX*4), Y7, Y3
	ADDQ        $32, BX
	CMPQ        BX, R9
	JLT         loop32

loop8check:
	CMPQ BX, R10
	JGE  reduce

loop8:
	VCVTPH2PS   (SI)(BX*2), Y4
	VFMADD231PS (AX)(BX*4), Y4, Y0
	ADDQ        $8, BX
	CMPQ        BX, R10
	JLT         loop8

reduce:
	REDUCE4

tail:
	CMPQ        BX, DX
	JGE         store
	MOVWLZX     (SI)(BX*2), R11
	VMOVD       R11, X1
	VCVTPH2PS   X1, X1
	VFMADD231SS (AX)(BX*4), X1, X0
	INCQ        BX
	JMP         tail

store:
	VMOVSS X0, (R8)
	ADDQ   $4, R8
	LEAQ   (SI)(DX*2), SI
	DECQ   CX
	JMP    row

done:
	VZEROUPPER
	RET

// func hasF16CInsn() bool reports CPUID leaf 1's F16C bit (ECX bit 29), which
// golang.org/x/sys/cpu does not expose.
TEXT ·hasF16CInsn(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	SHRL $29, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)
	RET
