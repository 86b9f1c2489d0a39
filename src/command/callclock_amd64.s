#include "textflag.h"

// func rdtsc() int64
// The time-stamp counter, unserialized: a call's duration is microseconds, so the few cycles
// by which RDTSC may run ahead of the instructions before it do not matter.
TEXT ·rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET
