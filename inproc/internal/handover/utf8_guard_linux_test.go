package handover

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestASCIIPrefixStaysInside places strings of every length up to 200
// against a page the process may not read, first ending at it and then
// starting right after one: a load past a string's end, or before its
// start, faults the test.
func TestASCIIPrefixStaysInside(t *testing.T) { eachASCIIPath(t, asciiPrefixStaysInside) }

func asciiPrefixStaysInside(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("no anonymous mapping to guard with: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Skipf("cannot protect a guard page: %v", err)
	}
	if err := syscall.Mprotect(mem[2*page:], syscall.PROT_NONE); err != nil {
		t.Skipf("cannot protect a guard page: %v", err)
	}
	inside := mem[page : 2*page]
	for i := range inside {
		inside[i] = 'a'
	}
	at := func(from, n int) string { return unsafe.String(&inside[from], n) }
	for n := 1; n <= 200; n++ {
		for _, s := range []string{at(page-n, n), at(0, n)} {
			if got := asciiPrefix([]string{s, s}); got != 2 {
				t.Fatalf("asciiPrefix of two ASCII strings of %d bytes = %d", n, got)
			}
			if !validUTF8(s) {
				t.Fatalf("validUTF8 of %d ASCII bytes = false", n)
			}
		}
	}
}
