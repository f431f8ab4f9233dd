package shm

import "google.golang.org/grpc/mem"

// recvPool holds the buffers messages arrive in. The codec that decodes a
// message frees its buffer, which then goes back, as grpc-go's
// transport's buffers do; a message nobody decodes is the collector's.
var recvPool = mem.DefaultBufferPool()

// preallocMax bounds the buffer a Sized frame has made ahead of the bytes
// it announces: what a peer can make us allocate before it sends them.
const preallocMax = 4 << 20

// newMessageBuf returns an empty buffer for a message of n bytes, and the
// pool's buffer it is in, if it is (nil otherwise). Up to preallocMax it
// has room for all n.
func newMessageBuf(n int) ([]byte, *[]byte) {
	if n > preallocMax || mem.IsBelowBufferPoolingThreshold(n) {
		return make([]byte, 0, min(n, preallocMax)), nil
	}
	held := recvPool.Get(n)
	return (*held)[:0], held
}

// gathered is the message gathered in b, in held if it is not nil.
func gathered(b []byte, held *[]byte) mem.Buffer {
	if held == nil {
		return mem.SliceBuffer(b)
	}
	*held = b
	return mem.NewBuffer(held, recvPool)
}

// encoded is a message as the wire carries it.
func encoded(b mem.Buffer) mem.BufferSlice {
	return mem.BufferSlice{b}
}
