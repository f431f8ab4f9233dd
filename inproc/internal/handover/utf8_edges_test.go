package handover

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// asciiPrefixWant is asciiPrefix as the words say, checked against a
// byte-by-byte reading too.
func asciiPrefixWant(t *testing.T, ss []string) int {
	t.Helper()
	want := len(ss)
	for i, s := range ss {
		if strings.IndexFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 || !isASCIIBytes(s) {
			want = i
			break
		}
	}
	if w := asciiPrefixWords(ss); w != want {
		t.Fatalf("asciiPrefixWords = %d, a byte-by-byte reading says %d", w, want)
	}
	return want
}

func isASCIIBytes(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestASCIIPrefixSlices: empty and nil slices, empty strings (nil data)
// anywhere, a string that is not ASCII in the middle, first and last byte.
func TestASCIIPrefixSlices(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		var nilSlice []string
		if got := asciiPrefix(nilSlice); got != 0 {
			t.Fatalf("asciiPrefix(nil) = %d", got)
		}
		if got := asciiPrefix([]string{}); got != 0 {
			t.Fatalf("asciiPrefix([]) = %d", got)
		}
		if got := asciiPrefix(make([]string, 0, 10)); got != 0 {
			t.Fatalf("asciiPrefix(len 0 cap 10) = %d", got)
		}
		// a slice of length 0 over strings that are not ASCII
		bad := []string{"\xff", "\xff"}
		if got := asciiPrefix(bad[:0]); got != 0 {
			t.Fatalf("asciiPrefix(bad[:0]) = %d", got)
		}
		if got := asciiPrefix(bad[1:1]); got != 0 {
			t.Fatalf("asciiPrefix(bad[1:1]) = %d", got)
		}
		var empty string
		if unsafe.StringData(empty) != nil {
			t.Fatal("the empty string has data")
		}
		for _, n := range []int{0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 300} {
			for _, pos := range []int{0, n / 2, n - 1} {
				if n == 0 {
					pos = -1
				}
				b := []byte(strings.Repeat("q", n))
				if pos >= 0 {
					b[pos] = 0x80
				}
				s := string(b)
				ss := []string{"", "a", "", strings.Repeat("z", 40), "", s, "", "\xff", ""}
				if got, want := asciiPrefix(ss), asciiPrefixWant(t, ss); got != want {
					t.Fatalf("n=%d pos=%d: asciiPrefix = %d, want %d", n, pos, got, want)
				}
				for i := range ss {
					for j := i; j <= len(ss); j++ {
						if got, want := asciiPrefix(ss[i:j]), asciiPrefixWant(t, ss[i:j]); got != want {
							t.Fatalf("n=%d pos=%d [%d:%d]: asciiPrefix = %d, want %d", n, pos, i, j, got, want)
						}
						want := -1
						for k, s := range ss[i:j] {
							if !utf8.ValidString(s) {
								want = k
								break
							}
						}
						if got := firstInvalidUTF8(ss[i:j]); got != want {
							t.Fatalf("firstInvalidUTF8 = %d, want %d", got, want)
						}
					}
				}
			}
		}
	})
}

// TestASCIIPrefixMany: counts much larger than a vector's, every string
// empty or ASCII but one near the end.
func TestASCIIPrefixMany(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		const n = 1 << 20
		ss := make([]string, n)
		for i := range ss {
			if i%3 == 0 {
				ss[i] = strings.Repeat("x", i%70)
			}
		}
		if got := asciiPrefix(ss); got != n {
			t.Fatalf("asciiPrefix of %d ASCII or empty strings = %d", n, got)
		}
		ss[n-2] = "é"
		if got := asciiPrefix(ss); got != n-2 {
			t.Fatalf("= %d, want %d", got, n-2)
		}
		if got := firstInvalidUTF8(ss); got != -1 {
			t.Fatalf("firstInvalidUTF8 = %d, want -1", got)
		}
		ss[n-1] = "\xc3"
		if got := firstInvalidUTF8(ss); got != n-1 {
			t.Fatalf("firstInvalidUTF8 = %d, want %d", got, n-1)
		}
	})
}

// TestASCIIPrefixRandom compares asciiPrefix with the words and
// firstInvalidUTF8 and validUTF8 with utf8.ValidString on random slices
// of strings cut from random bytes, mostly ASCII.
func TestASCIIPrefixRandom(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		buf := make([]byte, 1<<13)
		for round := range 1500 {
			for i := range buf {
				buf[i] = byte(r.IntN(0x80))
			}
			bad := r.IntN(4)
			for range bad {
				buf[r.IntN(len(buf))] = byte(0x80 + r.IntN(0x80))
			}
			if round%2 == 0 { // valid multi-byte too
				copy(buf[r.IntN(len(buf)-8):], "é€😀")
			}
			s := string(buf)
			var ss []string
			for range r.IntN(40) {
				from := r.IntN(len(s))
				to := from + r.IntN(min(len(s)-from, 400)+1)
				ss = append(ss, s[from:to])
			}
			if got, want := asciiPrefix(ss), asciiPrefixWant(t, ss); got != want {
				t.Fatalf("round %d: asciiPrefix = %d, want %d", round, got, want)
			}
			want := -1
			for k, s := range ss {
				if !utf8.ValidString(s) {
					want = k
					break
				}
			}
			if got := firstInvalidUTF8(ss); got != want {
				t.Fatalf("round %d: firstInvalidUTF8 = %d, want %d", round, got, want)
			}
			for _, s := range ss {
				if validUTF8(s) != utf8.ValidString(s) {
					t.Fatalf("validUTF8(%q) = %v", s, !utf8.ValidString(s))
				}
			}
		}
	})
}

// TestASCIIPrefixUnderPreemption runs asciiPrefix and validUTF8 on many
// goroutines, on strings some of which live on the goroutines' stacks
// (which move as they grow), while the collector runs and goroutines are
// preempted.
func TestASCIIPrefixUnderPreemption(t *testing.T) {
	eachASCIIPath(t, func(t *testing.T) {
		stop := meanwhile(runtime.GC)
		defer stop()
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := range 32 {
			wg.Go(func() {
				heap := make([]string, 200)
				for i := range heap {
					heap[i] = strings.Repeat("k", (i*7+g)%300)
				}
				for i := range 300 {
					if !stackStrings(i%50, g+i) {
						errs <- "a string on the stack read wrong"
						return
					}
					if got := asciiPrefix(heap); got != len(heap) {
						errs <- "heap strings read wrong"
						return
					}
					_ = make([]byte, 1024)
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
	})
}

// stackStrings grows the stack by depth frames, each with a string in an
// array on its frame, and checks them all at the bottom.
//
//go:noinline
func stackStrings(depth, seed int) bool {
	var arr [64]byte
	for i := range arr {
		arr[i] = byte('a' + (seed+i)%26)
	}
	ok := true
	if depth > 0 {
		ok = stackStrings(depth-1, seed+1)
	}
	s := unsafe.String(&arr[0], len(arr))
	ss := [3]string{s[:seed%64], s, s[seed%64:]}
	if asciiPrefix(ss[:]) != 3 || !validUTF8(s) {
		return false
	}
	arr[seed%64] = 0xe9
	s = unsafe.String(&arr[0], len(arr))
	ss = [3]string{s[:seed%64], s, ""}
	return ok && asciiPrefix(ss[:]) == 1 && !validUTF8(s)
}
