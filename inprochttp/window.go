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

// A window holds the response's body between the handler, which writes
// and flushes, and the client, which reads what was flushed, as
// golang.org/x/net/http2's pipe holds a stream's data. The exchange's mu
// guards it, and the exchange's cond wakes who waits on it.
type window struct {
	// The client may read buf[r:flushed]; buf[flushed:] waits for the
	// handler's next flush. At most windowSize bytes wait for the client.
	buf        []byte
	r, flushed int
	// Once the client reads no more, held is how many bytes the handler
	// wrote since its last flush that no one reads, and stuck says a
	// flush of them failed (see hold).
	held  int
	stuck bool
	// waitingForRoom says a write waits for the client to read.
	waitingForRoom bool
}

// waiting is how many bytes wait for the client, flushed or not.
func (w *window) waiting() int { return len(w.buf) - w.r }

// pending is what the handler wrote that the client has not read. Before
// the head is sent, that is all it wrote.
func (w *window) pending() []byte { return w.buf[w.r:] }

// readable reports whether the client has flushed bytes to read.
func (w *window) readable() bool { return w.r < w.flushed }

// read copies flushed bytes into p, and reports whether it read every
// byte the window holds.
func (w *window) read(p []byte) (n int, drained bool) {
	n = copy(p, w.buf[w.r:w.flushed])
	w.r += n
	drained = w.r == len(w.buf)
	if drained {
		w.buf, w.r, w.flushed = w.buf[:0], 0, 0
	}
	return n, drained
}

// roomReturned reports whether a write waits and may go on: the client
// has read enough that it need not wait again at once, as HTTP/2 returns
// its window.
func (w *window) roomReturned() bool {
	return w.waitingForRoom && w.waiting() <= windowSize/2
}

// writeWindow appends p, which fits in w. It is a function, not a
// method, as the handler writes strings too.
func writeWindow[T []byte | string](w *window, p T) {
	w.grow(len(p))
	w.buf = append(w.buf, p...)
}

// writeWindowUpTo appends what of p fits in limit bytes. A HEAD response
// keeps that much to detect its Content-Type.
func writeWindowUpTo[T []byte | string](w *window, p T, limit int) {
	w.buf = append(w.buf, p[:min(len(p), limit-len(w.buf))]...)
}

// grow makes room in buf for k more bytes, which fit in the window: it
// moves the unread bytes to the front, or takes a larger buffer.
func (w *window) grow(k int) {
	if len(w.buf)+k <= cap(w.buf) {
		return
	}
	if w.r > 0 {
		n := copy(w.buf, w.buf[w.r:])
		w.buf = w.buf[:n]
		w.flushed -= w.r
		w.r = 0
		if n+k <= cap(w.buf) {
			return
		}
	}
	grown := append(newWindow(len(w.buf)+k), w.buf...)
	freeWindow(w.buf)
	w.buf = grown
}

// flush makes every byte written readable.
func (w *window) flush() { w.flushed = len(w.buf) }

// discard forgets every byte written: no one reads a HEAD response's
// body.
func (w *window) discard() { w.buf = w.buf[:0] }

// unflushed is how many bytes the handler wrote since its last flush,
// without those held.
func (w *window) unflushed() int { return len(w.buf) - w.flushed }

// buffered is how many bytes net/http's 4 KiB bufio.Writer would hold:
// those written since the last flush.
func (w *window) buffered() int { return w.unflushed() + w.held }

// hold is what a write of n bytes returns once the response has ended for
// err, as net/http's 4 KiB bufio.Writer, which the handler's writes go
// through, returns it: it holds what fits, and fails once it must flush,
// having taken what fit; from then on it fails every write. What it holds
// no one reads.
func (w *window) hold(n int, err error) (int, error) {
	if w.stuck {
		return 0, err
	}
	held := w.buffered()
	if held+n <= chunkSize {
		w.held += n
		return n, nil
	}
	w.stuck = true
	if held == 0 {
		return 0, err // written through the buffer, and failed
	}
	return chunkSize - held, err
}

// drop gives the buffer back: the client reads no more. What the handler
// wrote since its last flush stays held.
func (w *window) drop() {
	w.held += w.unflushed()
	freeWindow(w.buf)
	w.buf, w.r, w.flushed = nil, 0, 0
}
