package inproc

import (
	"encoding/binary"
	"unicode/utf8"
	"unsafe"
)

// validUTF8 is utf8.ValidString with a faster way through ASCII, which
// most strings are: it ORs four 8-byte words at a time and looks at their
// high bits once per 32 bytes, where utf8.ValidString looks every 8.
func validUTF8(s string) bool {
	const hi = 0x8080808080808080
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	for len(b) >= 32 {
		w := binary.LittleEndian.Uint64(b[0:8]) | binary.LittleEndian.Uint64(b[8:16]) |
			binary.LittleEndian.Uint64(b[16:24]) | binary.LittleEndian.Uint64(b[24:32])
		if w&hi != 0 {
			return utf8.Valid(b)
		}
		b = b[32:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return utf8.Valid(b)
		}
	}
	return true
}
