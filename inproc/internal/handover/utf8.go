package handover

import (
	"encoding/binary"
	"unicode/utf8"
)

// validUTF8 is utf8.ValidString with a faster way through ASCII, which
// most strings are: it ORs four 8-byte words at a time and looks at their
// high bits once per 32 bytes, where utf8.ValidString looks every 8, then
// takes the rest a word at a time, the last word overlapping bytes already
// seen rather than going byte by byte. Past the first byte that is not
// ASCII, utf8.ValidString checks the rest.
func validUTF8(s string) bool {
	const hi = 0x8080808080808080
	b, n := stringBytes(s), len(s)
	i := 0
	for ; i+32 <= n; i += 32 {
		w := b[i : i+32 : i+32] // one bounds check for the four words
		if (le64(w[0:8])|le64(w[8:16])|le64(w[16:24])|le64(w[24:32]))&hi != 0 {
			return utf8.ValidString(s[i:])
		}
	}
	for ; i+8 <= n; i += 8 {
		if le64(b[i:i+8])&hi != 0 {
			return utf8.ValidString(s[i:])
		}
	}
	switch {
	case i == n:
		return true
	case n >= 8:
		// The last 8 bytes: those before i are ASCII already.
		return le64(b[n-8:])&hi == 0 || utf8.ValidString(s[i:])
	}
	for ; i < n; i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:])
		}
	}
	return true
}

// le64 reads 8 bytes as a word: one load where the machine reads unaligned
// words (amd64, arm64 and most others), bytes otherwise.
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
