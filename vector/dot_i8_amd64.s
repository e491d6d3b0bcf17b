//go:build amd64 && !purego

#include "textflag.h"

// func dotBatchI8AVX2(q *int16, rows *int8, dim, n int, out *int32)
//
// int8 rows times an int16 query (the int8 query pre-widened, so it is a
// plain memory operand). Per 16 columns: VPMOVSXBW sign-extends 16 row bytes
// to 16 int16 lanes, VPMADDWD multiplies them with 16 query int16s and adds
// adjacent pairs into 8 int32 lanes, VPADDD accumulates. Products of values
// in [-128,127] x [-32768,32767] and their pair sums fit int32, so nothing
// saturates (VPMADDUBSW, unsigned x signed with int16 saturation, is avoided
// on purpose). Four accumulators over 64 columns per iteration, then 16 per
// iteration, a horizontal sum, and a scalar tail for dim % 16, so no byte
// past a row is read.
// Register use: AX q, SI row, DX dim, CX rows left, R8 out, BX column,
// R9 dim rounded down to 64, R10 dim rounded down to 16, R11-R13 scalar.
TEXT ·dotBatchI8AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), AX
	MOVQ rows+8(FP), SI
	MOVQ dim+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), R8
	MOVQ DX, R9
	ANDQ $-64, R9
	MOVQ DX, R10
	ANDQ $-16, R10

row:
	TESTQ CX, CX
	JZ    done
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ  BX, BX
	CMPQ  BX, R9
	JGE   loop16check

loop64:
	VPMOVSXBW (SI)(BX*1), Y4
	VPMOVSXBW 16(SI)(BX*1), Y5
	VPMOVSXBW 32(SI)(BX*1), Y6
	VPMOVSXBW 48(SI)(BX*1), Y7
	VPMADDWD  (AX)(BX*2), Y4, Y4
	VPMADDWD  32(AX)(BX*2), Y5, Y5
	VPMADDWD  64(AX)(BX*2), Y6, Y6
	VPMADDWD  96(AX)(BX*2), Y7, Y7
	VPADDD    Y4, Y0, Y0
	VPADDD    Y5, Y1, Y1
	VPADDD    Y6, Y2, Y2
	VPADDD    Y7, Y3, Y3
	ADDQ      $64, BX
	CMPQ      BX, R9
	JLT       loop64

loop16check:
	CMPQ BX, R10
	JGE  reduce

loop16:
	VPMOVSXBW (SI)(BX*1), Y4
	VPMADDWD  (AX)(BX*2), Y4, Y4
	VPADDD    Y4, Y0, Y0
	ADDQ      $16, BX
	CMPQ      BX, R10
	JLT       loop16

reduce:
	VPADDD       Y1, Y0, Y0
	VPADDD       Y3, Y2, Y2
	VPADDD       Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, R13

tail:
	CMPQ    BX, DX
	JGE     store
	MOVBLSX (SI)(BX*1), R11
	MOVWLSX (AX)(BX*2), R12
	IMULL   R12, R11
	ADDL    R11, R13
	INCQ    BX
	JMP     tail

store:
	MOVL R13, (R8)
	ADDQ $4, R8
	ADDQ DX, SI
	DECQ CX
	JMP  row

done:
	VZEROUPPER
	RET
