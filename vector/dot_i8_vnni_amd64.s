//go:build amd64 && !purego

#include "textflag.h"

// func dotBatchI8VNNI(q *int8, rows *int8, dim, n int, out *int32, bias int32, tail uint64)
//
// out[i] = Σ_j q[j]*rows[i*dim+j] for i < n, in int32, with AVX-512 VNNI.
// VPDPBUSD multiplies unsigned bytes by signed bytes and adds each four
// adjacent products into an int32 lane, 64 bytes an instruction, without
// saturating. The rows are made unsigned by flipping their sign bit (r XOR
// 0x80 = r + 128), so each lane sums (r+128)*q and the result is the dot
// product plus 128*Σq, which the caller passes as bias and the kernel takes
// off. Four products of at most 255*128 fit an int32 lane with room to spare.
//
// Four rows at a time share one reduction (VPHADDD gathers their four sums
// into one 128-bit store); the rows left over go one by one. dim % 64 bytes
// at the end of each row are read with a zeroing mask (tail: its low dim%64
// bits set), so nothing past a row is read; the query's masked-off bytes are
// zero, so the row's, turned into 128 by the XOR, add nothing.
//
// Registers: AX q, SI row 0, R10-R12 rows 1-3, DX dim, CX rows left, R8 out,
// BX column, R9 dim rounded down to 64, DI bias, R13 scalar; Z0-Z3
// accumulators, Z4-Z7 rows, Z9 query, Z8 the 0x80 bytes, X14 bias, K1 the
// tail's mask. Z15 and above are left alone.
TEXT ·dotBatchI8VNNI(SB), NOSPLIT, $0-56
	MOVQ  q+0(FP), AX
	MOVQ  rows+8(FP), SI
	MOVQ  dim+16(FP), DX
	MOVQ  n+24(FP), CX
	MOVQ  out+32(FP), R8
	MOVLQSX bias+40(FP), DI
	KMOVQ tail+48(FP), K1
	MOVQ  DX, R9
	ANDQ  $-64, R9
	MOVL  $0x80808080, R13
	VPBROADCASTD R13, Z8
	VPBROADCASTD DI, X14

rows4:
	CMPQ CX, $4
	JLT  rows1
	LEAQ (SI)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ BX, BX
	CMPQ BX, R9
	JGE  tail4

loop4:
	VMOVDQU64 (AX)(BX*1), Z9
	VPXORD    (SI)(BX*1), Z8, Z4
	VPXORD    (R10)(BX*1), Z8, Z5
	VPXORD    (R11)(BX*1), Z8, Z6
	VPXORD    (R12)(BX*1), Z8, Z7
	VPDPBUSD  Z9, Z4, Z0
	VPDPBUSD  Z9, Z5, Z1
	VPDPBUSD  Z9, Z6, Z2
	VPDPBUSD  Z9, Z7, Z3
	ADDQ      $64, BX
	CMPQ      BX, R9
	JLT       loop4

tail4:
	CMPQ BX, DX
	JGE  reduce4
	VMOVDQU8.Z (AX)(BX*1), K1, Z9
	VMOVDQU8.Z (SI)(BX*1), K1, Z4
	VMOVDQU8.Z (R10)(BX*1), K1, Z5
	VMOVDQU8.Z (R11)(BX*1), K1, Z6
	VMOVDQU8.Z (R12)(BX*1), K1, Z7
	VPXORD     Z8, Z4, Z4
	VPXORD     Z8, Z5, Z5
	VPXORD     Z8, Z6, Z6
	VPXORD     Z8, Z7, Z7
	VPDPBUSD   Z9, Z4, Z0
	VPDPBUSD   Z9, Z5, Z1
	VPDPBUSD   Z9, Z6, Z2
	VPDPBUSD   Z9, Z7, Z3

reduce4:
	// Each accumulator's 16 lanes to 8, then the four rows' eight lanes to one sum each:
	// VPHADDD pairs lanes within each 128-bit half, so three of them leave, in each half,
	// [row0, row1, row2, row3] partial sums, and adding the halves finishes them.
	VEXTRACTI64X4 $1, Z0, Y4
	VEXTRACTI64X4 $1, Z1, Y5
	VEXTRACTI64X4 $1, Z2, Y6
	VEXTRACTI64X4 $1, Z3, Y7
	VPADDD        Y4, Y0, Y0
	VPADDD        Y5, Y1, Y1
	VPADDD        Y6, Y2, Y2
	VPADDD        Y7, Y3, Y3
	VPHADDD       Y1, Y0, Y0
	VPHADDD       Y3, Y2, Y2
	VPHADDD       Y2, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VPSUBD        X14, X0, X0
	VMOVDQU       X0, (R8)
	ADDQ          $16, R8
	LEAQ          (R12)(DX*1), SI
	SUBQ          $4, CX
	JMP           rows4

rows1:
	TESTQ CX, CX
	JZ    done
	VPXORD Z0, Z0, Z0
	XORQ   BX, BX
	CMPQ   BX, R9
	JGE    tail1

loop1:
	VPXORD   (SI)(BX*1), Z8, Z4
	VPDPBUSD (AX)(BX*1), Z4, Z0
	ADDQ     $64, BX
	CMPQ     BX, R9
	JLT      loop1

tail1:
	CMPQ BX, DX
	JGE  reduce1
	VMOVDQU8.Z (AX)(BX*1), K1, Z9
	VMOVDQU8.Z (SI)(BX*1), K1, Z4
	VPXORD     Z8, Z4, Z4
	VPDPBUSD   Z9, Z4, Z0

reduce1:
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDD        X1, X0, X0
	VPSHUFD       $0xb1, X0, X1
	VPADDD        X1, X0, X0
	VMOVD         X0, R13
	SUBL          DI, R13
	MOVL          R13, (R8)
	ADDQ          $4, R8
	ADDQ          DX, SI
	DECQ          CX
	JMP           rows1

done:
	VZEROUPPER
	RET
