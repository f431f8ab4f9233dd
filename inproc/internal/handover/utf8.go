package handover

import (
	"encoding/binary"
	"runtime"
	"unicode/utf8"
)

// The UTF-8 check a socket's sender makes reads every byte of every string
// field declared UTF-8; at a hundred bytes a string it was half of what a
// stream of strings cost with Share. Most strings are ASCII, so the check
// first looks for a byte with its high bit set, many strings at a time
// (asciiPrefix: vector instructions on amd64 and arm64, words elsewhere),
// and hands utf8.ValidString only the strings that have one.

// asciiChunk bounds the bytes one call of asciiPrefix reads. The runtime
// does not preempt assembly, so that a stop of the world (the collector's)
// waits for the call to return: a longer walk goes a chunk at a time and
// yields between chunks, as Go code would be preempted. A chunk takes
// microseconds; a list of a gigabyte in one call took 40 ms.
const asciiChunk = 256 << 10

// validUTF8 reports whether s is UTF-8, as utf8.ValidString does.
func validUTF8(s string) bool {
	for len(s) > asciiChunk {
		head := s[:asciiChunk]
		if asciiPrefix(oneString(&head)) == 0 {
			return utf8.ValidString(s) // s starts a rune: what came before is ASCII
		}
		s = s[asciiChunk:]
		runtime.Gosched()
	}
	return asciiPrefix(oneString(&s)) == 1 || utf8.ValidString(s)
}

// firstInvalidUTF8 returns the index of the first string of ss that is not
// UTF-8, or -1. It hands asciiPrefix the strings a chunk at a time, and a
// string longer than a chunk to validUTF8.
func firstInvalidUTF8(ss []string) int {
	return firstInvalidUTF8Of(ss, -1)
}

// firstInvalidUTF8Of is firstInvalidUTF8 for a caller that has counted the
// bytes of ss already (or -1 if not): a list of one chunk or less goes to
// asciiPrefix whole.
func firstInvalidUTF8Of(ss []string, bytes int) int {
	if bytes >= 0 && bytes <= asciiChunk {
		return firstInvalidInChunk(ss)
	}
	for i := 0; i < len(ss); {
		end, n := i, 0
		for end < len(ss) && n+len(ss[end]) <= asciiChunk {
			n += len(ss[end])
			end++
		}
		if end == i { // ss[i] is longer than a chunk
			if !validUTF8(ss[i]) {
				return i
			}
			end = i + 1
		} else if k := firstInvalidInChunk(ss[i:end]); k >= 0 {
			return i + k
		}
		if i = end; i < len(ss) {
			runtime.Gosched()
		}
	}
	return -1
}

// firstInvalidInChunk is firstInvalidUTF8 for strings of one chunk in all.
func firstInvalidInChunk(ss []string) int {
	for i := 0; ; i++ {
		i += asciiPrefix(ss[i:])
		if i == len(ss) {
			return -1
		}
		if !utf8.ValidString(ss[i]) {
			return i
		}
	}
}

// asciiPrefixWords is asciiPrefix in Go, for the machines with no assembly
// of it and as the reference the assembly is tested against.
func asciiPrefixWords(ss []string) int {
	for i, s := range ss {
		if !isASCII(s) {
			return i
		}
	}
	return len(ss)
}

// isASCII reports whether every byte of s is below 0x80. It ORs four
// 8-byte words at a time and looks at their high bits once per 32 bytes,
// then takes the rest a word at a time, the last word overlapping bytes
// already seen rather than going byte by byte.
func isASCII(s string) bool {
	const hi = 0x8080808080808080
	b, n := stringBytes(s), len(s)
	i := 0
	for ; i+32 <= n; i += 32 {
		w := b[i : i+32 : i+32] // one bounds check for the four words
		if (le64(w[0:8])|le64(w[8:16])|le64(w[16:24])|le64(w[24:32]))&hi != 0 {
			return false
		}
	}
	for ; i+8 <= n; i += 8 {
		if le64(b[i:i+8])&hi != 0 {
			return false
		}
	}
	switch {
	case i == n:
		return true
	case n >= 8:
		// The last 8 bytes: those before i are ASCII already.
		return le64(b[n-8:])&hi == 0
	}
	for ; i < n; i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// le64 reads 8 bytes as a word: one load where the machine reads unaligned
// words (amd64, arm64 and most others), bytes otherwise.
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// shortASCIIMax is the longest string shortHighBits reads: two words.
const shortASCIIMax = 16

// asciiHighBits are the high bits of the 8 bytes of a word.
const asciiHighBits = 0x8080808080808080

// shortHighBits returns the bytes of s, of 1 to shortASCIIMax bytes,
// ORed together with other bits, so that its asciiHighBits are clear if
// and only if s is ASCII. It is asciiPrefix for one short string without
// the call: the first and last word (4 bytes, or single bytes, for a
// shorter string), overlapping, cover every byte and none past s's end.
func shortHighBits(s string) uint64 {
	b := stringBytes(s)
	switch n := uint(len(b)); {
	case n >= 8:
		return le64(b) | le64(b[n-8:])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b) | binary.LittleEndian.Uint32(b[n-4:]))
	default:
		return uint64(b[0] | b[n>>1] | b[n-1])
	}
}
