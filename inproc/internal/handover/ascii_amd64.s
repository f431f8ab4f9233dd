//go:build !purego

#include "textflag.h"

// func asciiPrefix(ss []string) int
//
// SSE2, which every amd64 has: 64 bytes a step as four 16-byte loads ORed
// together and one PMOVMSKB of their high bits, then 16 at a time, then
// the string's last 16 bytes, overlapping bytes already seen rather than
// going byte by byte. No load reaches past a string's end: one shorter
// than 16 bytes is read as two overlapping words (8 or 4 bytes) or three
// bytes.
TEXT ·asciiPrefix(SB), NOSPLIT, $0-32
	MOVQ ss_base+0(FP), SI
	MOVQ ss_len+8(FP), CX
	XORQ AX, AX
	MOVQ $0x8080808080808080, R10

next:
	CMPQ AX, CX
	JEQ  done
	MOVQ 0(SI), DI // the string's bytes
	MOVQ 8(SI), DX // its length

next2:
	CMPQ DX, $16
	JB   short
	CMPB ·useAVX2(SB), $0
	JEQ  sse
	CMPQ DX, $32
	JB   sse
	LEAQ -32(DI)(DX*1), R9 // its last 32 bytes

avx64:
	CMPQ      DX, $64
	JB        avx32
	VMOVDQU   0(DI), Y0
	VPOR      32(DI), Y0, Y0
	VPMOVMSKB Y0, BX
	TESTL     BX, BX
	JNZ       vdone
	ADDQ      $64, DI
	SUBQ      $64, DX
	JMP       avx64

avx32:
	CMPQ      DX, $32
	JB        avxlast
	VMOVDQU   0(DI), Y0
	VPMOVMSKB Y0, BX
	TESTL     BX, BX
	JNZ       vdone
avxlast:
	VMOVDQU   0(R9), Y0
	VPMOVMSKB Y0, BX
	TESTL     BX, BX
	JNZ       vdone
	ADDQ $16, SI
	INCQ AX
	CMPQ AX, CX
	JEQ  vdone
	MOVQ 0(SI), DI
	MOVQ 8(SI), DX
	CMPQ DX, $32
	JB   vzero
	LEAQ -32(DI)(DX*1), R9
	JMP  avx64

vzero:
	VZEROUPPER
	JMP next2

vdone:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

sse:
	LEAQ -16(DI)(DX*1), R9 // its last 16 bytes

by64:
	CMPQ     DX, $64
	JB       by16
	MOVOU    0(DI), X0
	MOVOU    16(DI), X1
	MOVOU    32(DI), X2
	MOVOU    48(DI), X3
	POR      X1, X0
	POR      X3, X2
	POR      X2, X0
	PMOVMSKB X0, BX
	TESTL    BX, BX
	JNZ      done
	ADDQ     $64, DI
	SUBQ     $64, DX
	JMP      by64

by16:
	CMPQ     DX, $16
	JB       last16
	MOVOU    0(DI), X0
	PMOVMSKB X0, BX
	TESTL    BX, BX
	JNZ      done
	ADDQ     $16, DI
	SUBQ     $16, DX
	JMP      by16

last16:
	MOVOU    0(R9), X0
	PMOVMSKB X0, BX
	TESTL    BX, BX
	JNZ      done
	JMP      ok

short:
	CMPQ  DX, $8
	JB    short4
	MOVQ  0(DI), BX
	ORQ   -8(DI)(DX*1), BX
	TESTQ R10, BX
	JNZ   done
	JMP   ok

short4:
	CMPQ  DX, $4
	JB    short1
	MOVL  0(DI), BX
	ORL   -4(DI)(DX*1), BX
	TESTL $0x80808080, BX
	JNZ   done
	JMP   ok

short1:
	TESTQ   DX, DX
	JEQ     ok
	MOVBLZX 0(DI), BX
	MOVBLZX -1(DI)(DX*1), R8
	ORL     R8, BX
	SHRQ    $1, DX
	MOVBLZX 0(DI)(DX*1), R8
	ORL     R8, BX
	TESTL   $0x80, BX
	JNZ     done

ok:
	ADDQ $16, SI
	INCQ AX
	JMP  next

done:
	MOVQ AX, ret+24(FP)
	RET
