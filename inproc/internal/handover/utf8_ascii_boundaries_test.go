package handover

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// firstInvalidWant is firstInvalidUTF8 as utf8.ValidString says.
func firstInvalidWant(ss []string) int {
	for i, s := range ss {
		if !utf8.ValidString(s) {
			return i
		}
	}
	return -1
}

// TestASCIIPrefixHighByteAfterEveryLength: a string with one high byte at
// each position, for every length 0..300, after an ASCII string of each
// length where the vector paths change state (the AVX2 path goes from one
// string of 32 bytes or more straight to the next), and before one that
// is not ASCII; and the same string alone, cut from a longer buffer at
// every offset of a 64-byte line, so that the loads start at every
// alignment (validUTF8).
func TestASCIIPrefixHighByteAfterEveryLength(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		before := []int{0, 3, 8, 15, 16, 31, 32, 33, 63, 64, 65, 96, 128}
		buf := []byte(strings.Repeat("a", 300+64))
		ascii := strings.Repeat("p", 200)
		for n := 0; n <= 300; n++ {
			for pos := -1; pos < n; pos++ {
				for _, hi := range []byte{0x80, 0xff} {
					if pos < 0 && hi != 0x80 {
						continue
					}
					b := []byte(strings.Repeat("q", n))
					if pos >= 0 {
						b[pos] = hi
					}
					s := string(b)
					want := 2 // the high byte makes s the first that is not ASCII
					if pos >= 0 {
						want = 1
					}
					if n < 40 && pos < 0 {
						if w := asciiPrefixWant(t, []string{ascii[:5], s, "\xff"}); w != want {
							t.Fatalf("test error: %d, %d", w, want)
						}
					}
					for _, k := range before {
						ss := []string{ascii[:k], s, "\xff", "z"}
						if got := asciiPrefix(ss); got != want {
							t.Fatalf("after %d ASCII bytes, n=%d pos=%d hi=%#x: asciiPrefix = %d, want %d", k, n, pos, hi, got, want)
						}
						if got := asciiPrefix(ss[:2]); got != min(want, 2) {
							t.Fatalf("after %d ASCII bytes (last), n=%d pos=%d hi=%#x: asciiPrefix = %d, want %d", k, n, pos, hi, got, want)
						}
					}
					if n%7 != 0 && n > 70 || pos%3 != 0 {
						continue // alignments: a subset of the longer lengths
					}
					for off := range 64 {
						c := buf[off : off+n : off+n]
						copy(c, b)
						cs := string(c)
						if got := validUTF8(cs); got != (pos < 0) {
							t.Fatalf("offset %d n=%d pos=%d hi=%#x: validUTF8 = %v", off, n, pos, hi, got)
						}
						for i := range c {
							c[i] = 'a'
						}
					}
				}
			}
		}
	})
}

// TestShortHighBits: every string of 1 to shortASCIIMax bytes, with one
// high byte at each position or none, cut from a buffer whose bytes
// around it are all high, so that a read before or past the string would
// call an ASCII string not ASCII: shortHighBits tells ASCII as
// utf8.ValidString's ASCII test does.
func TestShortHighBits(t *testing.T) {
	buf := []byte(strings.Repeat("\xff", 64))
	for n := 1; n <= shortASCIIMax; n++ {
		for pos := -1; pos < n; pos++ {
			for _, hi := range []byte{0x80, 0xc3, 0xff} {
				for off := 8; off < 8+16; off++ {
					b := buf[off : off+n : off+n]
					for i := range b {
						b[i] = 'a' + byte(i)
					}
					if pos >= 0 {
						b[pos] = hi
					}
					s := string(b)
					if got, want := shortHighBits(s)&asciiHighBits == 0, pos < 0; got != want {
						t.Fatalf("n=%d pos=%d hi=%#x offset %d: ASCII %v, want %v", n, pos, hi, off, got, want)
					}
					for i := range b {
						b[i] = 0xff
					}
				}
			}
		}
	}
}

// TestUTF8ManyShortStrings: lists of thousands of short strings (the
// shape of a repeated string field of tags or ids), every one ASCII but
// one, at every index near the vector steps and at the ends, and the
// same list with a valid multi-byte string before the bad one:
// firstInvalidUTF8 and firstInvalidUTF8Of find the string utf8.ValidString
// finds first.
func TestUTF8ManyShortStrings(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		for _, size := range []int{0, 1, 2, 3, 5, 8, 13, 16, 17, 31, 32, 33} {
			const n = 1000
			ss := make([]string, n)
			for i := range ss {
				ss[i] = strings.Repeat(string(rune('a'+i%26)), size)
			}
			if got := firstInvalidUTF8(ss); got != -1 {
				t.Fatalf("size %d: all ASCII, firstInvalidUTF8 = %d", size, got)
			}
			for _, bad := range []int{0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 500, n - 2, n - 1} {
				for _, v := range []string{"\xff", "é\xff", "\xc3", "\xed\xa0\x80", strings.Repeat("b", size) + "\x80"} {
					saved := ss[bad]
					ss[bad] = v
					want := firstInvalidWant(ss)
					if got := firstInvalidUTF8(ss); got != want {
						t.Fatalf("size %d bad at %d (%q): firstInvalidUTF8 = %d, want %d", size, bad, v, got, want)
					}
					if got := firstInvalidUTF8Of(ss, -1); got != want {
						t.Fatalf("size %d bad at %d (%q): firstInvalidUTF8Of = %d, want %d", size, bad, v, got, want)
					}
					if bad > 0 {
						prev := ss[bad-1]
						ss[bad-1] = "日本"
						if got := firstInvalidUTF8(ss); got != want {
							t.Fatalf("size %d bad at %d after a valid multi-byte one: firstInvalidUTF8 = %d, want %d", size, bad, got, want)
						}
						ss[bad-1] = prev
					}
					ss[bad] = saved
				}
			}
		}
	})
}

// TestUTF8ChunkBoundaries: strings and lists around asciiChunk, the
// most the assembly reads at a time: a bad byte, or a multi-byte rune
// (valid and cut), just before, at and after each chunk boundary; lists
// whose strings straddle chunks, counted (sizeAt's path) and not:
// validUTF8, firstInvalidUTF8 and firstInvalidUTF8Of agree with
// utf8.ValidString.
func TestUTF8ChunkBoundaries(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		base := []byte(strings.Repeat("x", 3*asciiChunk+100))
		for _, n := range []int{asciiChunk - 1, asciiChunk, asciiChunk + 1, 2*asciiChunk + 3, 3*asciiChunk + 100} {
			for _, boundary := range []int{asciiChunk, 2 * asciiChunk} {
				for _, d := range []int{-3, -2, -1, 0, 1, 2} {
					pos := boundary + d
					if pos < 0 || pos >= n {
						continue
					}
					for _, ins := range []string{"\xff", "é", "\xe6\x97\xa5", "\xe6\x97", "\xf0\x9f\x98\x80", "\xc3"} {
						if pos+len(ins) > n {
							continue
						}
						b := base[:n:n]
						copy(b[pos:], ins)
						s := string(b)
						if got, want := validUTF8(s), utf8.ValidString(s); got != want {
							t.Fatalf("n=%d %q at %d: validUTF8 = %v, want %v", n, ins, pos, got, want)
						}
						ss := []string{"a", s, "b"}
						if got, want := firstInvalidUTF8(ss), firstInvalidWant(ss); got != want {
							t.Fatalf("n=%d %q at %d in a list: firstInvalidUTF8 = %d, want %d", n, ins, pos, got, want)
						}
						for i := range len(ins) {
							b[pos+i] = 'x'
						}
					}
				}
			}
		}
		// A list of many 1000-byte strings, more than a chunk in all, one
		// bad at each index around the places it is cut into chunks.
		const l = 1000
		per := asciiChunk / l // strings a chunk holds
		ss := make([]string, 3*per+5)
		for i := range ss {
			ss[i] = strings.Repeat("y", l)
		}
		total := len(ss) * l
		for _, bad := range []int{0, per - 1, per, per + 1, 2*per - 1, 2 * per, 2*per + 1, len(ss) - 1} {
			for _, at := range []int{0, l / 2, l - 1} {
				b := []byte(ss[bad])
				b[at] = 0x80
				saved := ss[bad]
				ss[bad] = string(b)
				for _, bytes := range []int{-1, total} {
					if got := firstInvalidUTF8Of(ss, bytes); got != bad {
						t.Fatalf("bad string %d (byte %d), bytes %d: firstInvalidUTF8Of = %d", bad, at, bytes, got)
					}
				}
				ss[bad] = saved
			}
		}
		if got := firstInvalidUTF8Of(ss, total); got != -1 {
			t.Fatalf("all ASCII: firstInvalidUTF8Of = %d", got)
		}
		// A string longer than a chunk between short ones.
		long := strings.Repeat("z", asciiChunk+7)
		list := []string{"a", long, "b\xff"}
		if got := firstInvalidUTF8Of(list, len(long)+3); got != 2 {
			t.Fatalf("a long string between short ones: firstInvalidUTF8Of = %d, want 2", got)
		}
		list = []string{"a", long[:asciiChunk] + "\xff" + long[asciiChunk+1:], "b"}
		if got := firstInvalidUTF8Of(list, len(long)+2); got != 1 {
			t.Fatalf("a long string bad past its first chunk: firstInvalidUTF8Of = %d, want 1", got)
		}
	})
}
