//go:build !purego

#include "textflag.h"

// func indexSpecialBlocks(b []byte) int
//
// Per 16-byte block: a byte is special when it equals '"' or '\\', or when
// max(byte, 0x1f) == 0x1f (unsigned), that is, when it is below 0x20.
TEXT ·indexSpecialBlocks(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	ANDQ $~15, BX            // the length of the whole blocks
	XORQ AX, AX              // the offset of the block

	MOVQ $0x2222222222222222, DX
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1        // X1: '"' in every byte
	MOVQ $0x5c5c5c5c5c5c5c5c, DX
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2        // X2: '\\' in every byte
	MOVQ $0x1f1f1f1f1f1f1f1f, DX
	MOVQ DX, X3
	PUNPCKLQDQ X3, X3        // X3: 0x1f in every byte

loop:
	CMPQ AX, BX
	JAE  none
	MOVOU (SI)(AX*1), X0
	MOVO  X0, X4
	PCMPEQB X1, X4           // quotes
	MOVO  X0, X5
	PCMPEQB X2, X5           // backslashes
	POR   X5, X4
	PMAXUB X3, X0
	PCMPEQB X3, X0           // control characters
	POR   X0, X4
	PMOVMSKB X4, DX
	TESTL DX, DX
	JNZ   found
	ADDQ  $16, AX
	JMP   loop

found:
	BSFL DX, DX
	ADDQ DX, AX
	MOVQ AX, ret+24(FP)
	RET

none:
	MOVQ BX, ret+24(FP)
	RET
