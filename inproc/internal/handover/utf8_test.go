package handover

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzValidUTF8 checks validUTF8 and firstInvalidUTF8 against
// utf8.ValidString, and asciiPrefix against asciiPrefixWords, on s cut at
// every alignment of the vector steps and split into several strings.
func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{"", "a", "héllo", "\xff", strings.Repeat("x", 31) + "\xff", strings.Repeat("x", 32) + "é", strings.Repeat("y", 64) + "\xe2\x82", "\xed\xa0\x80", strings.Repeat("z", 100) + "\x80" + strings.Repeat("z", 30)} {
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, s string, split uint8) {
		eachASCIIPath(t, func(t *testing.T) { checkUTF8(t, s, split) })
	})
}

func checkUTF8(t *testing.T, s string, split uint8) {
	for _, cut := range []int{0, 1, 7, 15, 31, 33, 63, 65} {
		if cut > len(s) {
			break
		}
		c := s[cut:]
		if got, want := validUTF8(c), utf8.ValidString(c); got != want {
			t.Fatalf("validUTF8(%q) = %v, utf8.ValidString says %v", c, got, want)
		}
		ss := splitEvery(c, int(split))
		if got, want := asciiPrefix(ss), asciiPrefixWords(ss); got != want {
			t.Fatalf("asciiPrefix(%q) = %d, asciiPrefixWords says %d", ss, got, want)
		}
		want := -1
		for i, s := range ss {
			if !utf8.ValidString(s) {
				want = i
				break
			}
		}
		if got := firstInvalidUTF8(ss); got != want {
			t.Fatalf("firstInvalidUTF8(%q) = %d, want %d", ss, got, want)
		}
		if got := firstInvalidUTF8Of(ss, len(c)); got != want {
			t.Fatalf("firstInvalidUTF8Of(%q, %d) = %d, want %d", ss, len(c), got, want)
		}
	}
}

// splitEvery cuts s into strings of n bytes and of the lengths after n,
// growing, so that one slice holds strings of many lengths.
func splitEvery(s string, n int) []string {
	var ss []string
	for len(s) > 0 {
		k := min(n, len(s))
		ss = append(ss, s[:k])
		s = s[k:]
		n = n*3/2 + 1
	}
	return ss
}

// TestASCIIPrefixEveryPosition puts one byte of 0x80 or more at each
// position of strings of every length up to 200, alone and after ASCII
// strings of other lengths, which covers every branch of the assembly
// (short words, the 16-, 32- and 64-byte steps, the overlapping last load).
func TestASCIIPrefixEveryPosition(t *testing.T) { eachASCIIPath(t, asciiPrefixEveryPosition) }

func asciiPrefixEveryPosition(t *testing.T) {
	ascii := func(n int) string { return strings.Repeat("a", n) }
	for n := 0; n <= 200; n++ {
		before := []string{ascii(3), ascii(n), ascii(70)}
		if got := asciiPrefix(before); got != 3 {
			t.Fatalf("asciiPrefix of ASCII strings (3, %d, 70 bytes) = %d, want 3", n, got)
		}
		for pos := range n {
			for _, hi := range []byte{0x80, 0xc3, 0xff} {
				b := []byte(ascii(n))
				b[pos] = hi
				ss := append(before[:3:3], string(b), ascii(5))
				if got := asciiPrefix(ss); got != 3 {
					t.Fatalf("byte %#x at %d of %d: asciiPrefix = %d, want 3", hi, pos, n, got)
				}
			}
		}
	}
}

func BenchmarkStringsUTF8(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		ss := make([]string, 100)
		for i := range ss {
			s := fmt.Sprint(i)
			ss[i] = s + strings.Repeat("x", size-len(s))
		}
		b.Run(fmt.Sprintf("size=%d/impl=firstInvalidUTF8", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if firstInvalidUTF8(ss) >= 0 {
					b.Fatal("not UTF-8")
				}
			}
		})
		b.Run(fmt.Sprintf("size=%d/impl=words", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if asciiPrefixWords(ss) != len(ss) {
					b.Fatal("not ASCII")
				}
			}
		})
		b.Run(fmt.Sprintf("size=%d/impl=utf8.ValidString", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range ss {
					if !utf8.ValidString(s) {
						b.Fatal("not UTF-8")
					}
				}
			}
		})
	}
}
