package handover

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzValidUTF8 checks validUTF8 against utf8.ValidString.
func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{"", "a", "héllo", "\xff", strings.Repeat("x", 31) + "\xff", strings.Repeat("x", 32) + "é", strings.Repeat("y", 64) + "\xe2\x82", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, cut := range []int{0, 1, 7, 31, 33} { // every alignment of the 32-byte steps
			if cut > len(s) {
				break
			}
			if got, want := validUTF8(s[cut:]), utf8.ValidString(s[cut:]); got != want {
				t.Fatalf("validUTF8(%q) = %v, utf8.ValidString says %v", s[cut:], got, want)
			}
		}
	})
}

func BenchmarkValidUTF8(b *testing.B) {
	s := strings.Repeat("x", 100)
	b.Run("impl=validUTF8", func(b *testing.B) {
		for b.Loop() {
			validUTF8(s)
		}
	})
	b.Run("impl=utf8.ValidString", func(b *testing.B) {
		for b.Loop() {
			utf8.ValidString(s)
		}
	})
}
