//go:build !purego

#include "textflag.h"

// func asciiPrefix(ss []string) int
//
// NEON: 64 bytes a step as four 16-byte loads ORed together, whose two
// halves are ORed into one word to test the high bits, then 16 at a time,
// then the string's last 16 bytes, overlapping bytes already seen. No load
// reaches past a string's end: one shorter than 16 bytes is read as two
// overlapping words (8 or 4 bytes) or three bytes.
TEXT ·asciiPrefix(SB), NOSPLIT, $0-32
	MOVD ss_base+0(FP), R0
	MOVD ss_len+8(FP), R1
	MOVD $0, R2
	MOVD $0x8080808080808080, R10

next:
	CMP  R1, R2
	BEQ  done
	MOVD 0(R0), R3 // the string's bytes
	MOVD 8(R0), R4 // its length
	CMP  $16, R4
	BLT  short
	ADD  R3, R4, R9
	SUB  $16, R9 // its last 16 bytes

by64:
	CMP    $64, R4
	BLT    by16
	VLD1.P 64(R3), [V0.B16, V1.B16, V2.B16, V3.B16]
	VORR   V1.B16, V0.B16, V0.B16
	VORR   V3.B16, V2.B16, V2.B16
	VORR   V2.B16, V0.B16, V0.B16
	VMOV   V0.D[0], R5
	VMOV   V0.D[1], R6
	ORR    R6, R5, R5
	TST    R10, R5
	BNE    done
	SUB    $64, R4
	B      by64

by16:
	CMP    $16, R4
	BLT    last16
	VLD1.P 16(R3), [V0.B16]
	VMOV   V0.D[0], R5
	VMOV   V0.D[1], R6
	ORR    R6, R5, R5
	TST    R10, R5
	BNE    done
	SUB    $16, R4
	B      by16

last16:
	VLD1 (R9), [V0.B16]
	VMOV V0.D[0], R5
	VMOV V0.D[1], R6
	ORR  R6, R5, R5
	TST  R10, R5
	BNE  done
	B    ok

short:
	CMP  $8, R4
	BLT  short4
	ADD  R3, R4, R7
	MOVD (R3), R5
	MOVD -8(R7), R6
	ORR  R6, R5, R5
	TST  R10, R5
	BNE  done
	B    ok

short4:
	CMP   $4, R4
	BLT   short1
	ADD   R3, R4, R7
	MOVWU (R3), R5
	MOVWU -4(R7), R6
	ORR   R6, R5, R5
	TST   R10, R5
	BNE   done
	B     ok

short1:
	CBZ   R4, ok
	ADD   R3, R4, R7
	MOVBU (R3), R5
	MOVBU -1(R7), R6
	ORR   R6, R5, R5
	LSR   $1, R4, R8
	MOVBU (R3)(R8), R6
	ORR   R6, R5, R5
	TST   $0x80, R5
	BNE   done

ok:
	ADD $16, R0
	ADD $1, R2
	B   next

done:
	MOVD R2, ret+24(FP)
	RET
