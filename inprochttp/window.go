package inprochttp

import "sync"

// The window's buffer comes from a pool of its size, and goes back once
// the client is done with it: a stream would otherwise allocate every
// size on its way to the window's, and a unary call a buffer of its own.
// The sizes are net/http's HTTP/2 server's chunk (small responses), a
// few chunks, and the window.
var (
	smallWindows  = sync.Pool{New: func() any { return new([chunkSize]byte) }}
	mediumWindows = sync.Pool{New: func() any { return new([8 * chunkSize]byte) }}
	fullWindows   = sync.Pool{New: func() any { return new([windowSize]byte) }}
)

// newWindow returns an empty buffer for at least n bytes, up to the
// window's size.
func newWindow(n int) []byte {
	switch {
	case n <= chunkSize:
		return smallWindows.Get().(*[chunkSize]byte)[:0]
	case n <= 8*chunkSize:
		return mediumWindows.Get().(*[8 * chunkSize]byte)[:0]
	}
	return fullWindows.Get().(*[windowSize]byte)[:0]
}

// freeWindow gives b back to its pool, if it came from one. No one may use
// b after.
func freeWindow(b []byte) {
	switch cap(b) {
	case chunkSize:
		smallWindows.Put((*[chunkSize]byte)(b[:chunkSize]))
	case 8 * chunkSize:
		mediumWindows.Put((*[8 * chunkSize]byte)(b[:8*chunkSize]))
	case windowSize:
		fullWindows.Put((*[windowSize]byte)(b[:windowSize]))
	}
}

// appendLocked makes room in buf for k more bytes, which fit in the
// window: it moves the unread bytes to the front, or takes a larger
// buffer.
func (ex *exchange) appendLocked(k int) {
	if len(ex.buf)+k <= cap(ex.buf) {
		return
	}
	if ex.r > 0 {
		n := copy(ex.buf, ex.buf[ex.r:])
		ex.buf = ex.buf[:n]
		ex.flushed -= ex.r
		ex.r = 0
		if n+k <= cap(ex.buf) {
			return
		}
	}
	grown := append(newWindow(len(ex.buf)+k), ex.buf...)
	freeWindow(ex.buf)
	ex.buf = grown
}

// dropWindowLocked gives the window's buffer back: the client reads no
// more. What the handler wrote since its last flush stays held.
func (ex *exchange) dropWindowLocked() {
	ex.held += len(ex.buf) - ex.flushed
	freeWindow(ex.buf)
	ex.buf, ex.r, ex.flushed = nil, 0, 0
}
