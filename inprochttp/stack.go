package inprochttp

// growStack grows the calling goroutine's stack to fit a frame of
// stackFrame bytes, at once. A handler's goroutine is new for each
// exchange and starts with a small stack; grown a doubling at a time as
// the handler goes deeper, every growth copies the stack, and copying
// walks every frame on it: connect-go's handlers grew it from 2 KiB to 8,
// which cost a fifth of a unary call in-process. Grown here, with two
// frames on the stack, one copy of a few frames makes room for what
// follows.
//
//go:noinline
func growStack() {
	var frame [stackFrame]byte
	touch(frame[:]) // so that the frame is kept
}

// touch uses b, which does not escape.
//
//go:noinline
func touch(b []byte) { b[0] = 1 }

// stackFrame is the frame growStack makes room for: 8 KiB of stack with
// the guard, what connect-go's handlers need (profiled), no more.
const stackFrame = 6 << 10
