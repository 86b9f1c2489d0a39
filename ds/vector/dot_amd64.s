#include "textflag.h"

// func dotI8AVX2(a, b *int8, n int) int32
// Sign-extends 16 int8s a step to int16 (VPMOVSXBW), multiplies and adds pairs to int32 (VPMADDWD),
// two accumulators; the tail below 16 is scalar. |a*b| <= 16384, so int32 holds n up to 2^17.
TEXT ·dotI8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

loop32:
	CMPQ CX, $32
	JL   tail16
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       loop32

tail16:
	CMPQ CX, $16
	JL   reduce
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	ADDQ      $16, SI
	ADDQ      $16, DI
	SUBQ      $16, CX

reduce:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER

scalar:
	TESTQ   CX, CX
	JE      done
	MOVBQSX (SI), R8
	MOVBQSX (DI), R9
	IMULQ   R9, R8
	ADDL    R8, AX
	INCQ    SI
	INCQ    DI
	DECQ    CX
	JMP     scalar

done:
	MOVL AX, ret+24(FP)
	RET

// func dotF32I8AVX2(a *float32, b *int8, n int) float32
// Asymmetric dot product: float32 query against an int8 vector. 16 components a step: sign-extend
// 8 int8s to int32 (VPMOVSXBD), convert (VCVTDQ2PS), fused multiply-add, two accumulators; the
// tail below 8 is scalar.
TEXT ·dotF32I8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

floop16:
	CMPQ CX, $16
	JL   ftail8
	VPMOVSXBD   (DI), Y2
	VCVTDQ2PS   Y2, Y2
	VFMADD231PS (SI), Y2, Y0
	VPMOVSXBD   8(DI), Y3
	VCVTDQ2PS   Y3, Y3
	VFMADD231PS 32(SI), Y3, Y1
	ADDQ        $64, SI
	ADDQ        $16, DI
	SUBQ        $16, CX
	JMP         floop16

ftail8:
	CMPQ CX, $8
	JL   freduce
	VPMOVSXBD   (DI), Y2
	VCVTDQ2PS   Y2, Y2
	VFMADD231PS (SI), Y2, Y0
	ADDQ        $32, SI
	ADDQ        $8, DI
	SUBQ        $8, CX

freduce:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4E, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xB1, X0, X1
	VADDPS       X1, X0, X0
	VZEROUPPER

fscalar:
	TESTQ     CX, CX
	JE        fdone
	MOVBLSX   (DI), R8
	CVTSL2SS  R8, X2
	MULSS     (SI), X2
	ADDSS     X2, X0
	ADDQ      $4, SI
	INCQ      DI
	DECQ      CX
	JMP       fscalar

fdone:
	MOVSS X0, ret+24(FP)
	RET

// func prefetchLines(p unsafe.Pointer, n int)
// Asks for the n cache lines from p (PREFETCHT0): a hint, it never faults.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX

ploop:
	TESTQ CX, CX
	JLE   pdone
	PREFETCHT0 (AX)
	ADDQ  $64, AX
	DECQ  CX
	JMP   ploop

pdone:
	RET
