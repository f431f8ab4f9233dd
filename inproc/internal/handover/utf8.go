package handover

import (
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
	word, n := stringWords(s), len(s)
	i := 0
	for ; i+32 <= n; i += 32 {
		if (word(i)|word(i+8)|word(i+16)|word(i+24))&hi != 0 {
			return utf8.ValidString(s[i:])
		}
	}
	for ; i+8 <= n; i += 8 {
		if word(i)&hi != 0 {
			return utf8.ValidString(s[i:])
		}
	}
	switch {
	case i == n:
		return true
	case n >= 8:
		// The last 8 bytes: those before i are ASCII already.
		return word(n-8)&hi == 0 || utf8.ValidString(s[i:])
	}
	for ; i < n; i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:])
		}
	}
	return true
}
