//go:build !amd64 && !arm64

package goroutine

import "runtime"

// Current returns an identity of the running goroutine: its number, read
// from the header of its stack trace. It takes about a microsecond; the
// architectures most used read it from a register instead.
func Current() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	var id uintptr
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
