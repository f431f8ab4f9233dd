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
	inside := guardedPages(t, 1)
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

// guardedPages returns n pages of memory with a page on each side that the
// process may not read, unmapped when t ends; it skips t where the
// machine cannot make them.
func guardedPages(t *testing.T, n int) []byte {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, (n+2)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("no anonymous mapping to guard with: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	for _, g := range [][]byte{mem[:page], mem[(n+1)*page:]} {
		if err := syscall.Mprotect(g, syscall.PROT_NONE); err != nil {
			t.Skipf("cannot protect a guard page: %v", err)
		}
	}
	return mem[page : (n+1)*page]
}
