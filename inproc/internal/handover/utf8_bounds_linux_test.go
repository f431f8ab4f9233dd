package handover

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestASCIIPrefixBounds places strings of every length 0..300 against a
// page the process may not read, ending at it and starting right after
// one, alone and in the middle of a slice of other such strings; every
// other readable byte around them is 0xff, so that a load outside a
// string that does not fault still shows, as a string wrongly found not
// ASCII. Then each string has a byte of 0x80 or more at its first, its
// middle and its last byte.
func TestASCIIPrefixBounds(t *testing.T) { eachASCIIPath(t, asciiPrefixBounds) }

func asciiPrefixBounds(t *testing.T) {
	page := syscall.Getpagesize()
	inside := guardedPages(t, 2)
	fill := func() {
		for i := range inside {
			inside[i] = 0xff
		}
	}
	// at returns n bytes of 'a' at from, the rest 0xff.
	at := func(from, n int) string {
		for i := from; i < from+n; i++ {
			inside[i] = 'a'
		}
		// n == 0 at the end: a pointer to the guard page itself
		return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(&inside[0]), from)), n)
	}
	for n := 0; n <= 300; n++ {
		fill()
		end := at(len(inside)-n, n) // ends at the guard page
		start := at(0, n)           // starts after the guard page
		mid := at(page-n/2, n)      // straddles the boundary between the two readable pages
		for _, ss := range [][]string{
			{end}, {start}, {mid},
			{start, end, mid, start},
			{"", end, "", start, ""},
		} {
			if got := asciiPrefix(ss); got != len(ss) {
				t.Fatalf("%d ASCII strings of %d bytes with 0xff around them: asciiPrefix = %d", len(ss), n, got)
			}
			if got := firstInvalidUTF8(ss); got != -1 {
				t.Fatalf("firstInvalidUTF8 of ASCII = %d", got)
			}
			for _, s := range ss {
				if !validUTF8(s) {
					t.Fatalf("validUTF8 of %d ASCII bytes with 0xff around = false", n)
				}
			}
		}
		for _, base := range []int{len(inside) - n, 0, page - n/2} {
			for _, pos := range []int{0, n / 2, n - 1} {
				if n == 0 {
					break
				}
				fill()
				s := at(base, n)
				inside[base+pos] = 0xc3
				other := at(1000, 50) // away from every s
				ss := []string{other, "", other, s, other}
				if got := asciiPrefix(ss); got != 3 {
					t.Fatalf("byte 0xc3 at %d of %d at %d: asciiPrefix = %d, want 3", pos, n, base, got)
				}
				if validUTF8(s) {
					t.Fatalf("validUTF8 of a lone 0xc3 at %d of %d = true", pos, n)
				}
				if got := firstInvalidUTF8(ss); got != 3 {
					t.Fatalf("firstInvalidUTF8 = %d, want 3", got)
				}
			}
		}
	}
}
