package shmwire

import (
	"bufio"
	"fmt"
	"io"
)

// Reader reads frames a peer wrote.
type Reader struct {
	r          *bufio.Reader
	maxPayload uint32
}

// NewReader returns a Reader of r that refuses payloads over maxPayload,
// the MaxFrame of the reader's own hello.
func NewReader(r io.Reader, maxPayload uint32) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), maxPayload: maxPayload}
}

// ReadFrame reads the next frame. Its payload is valid until the next
// call, unless owned says it is the caller's: a payload larger than the
// reader's buffer is read into memory of its own, which the caller may
// keep rather than copy. A header a peer may not send is an error: the
// connection cannot be read further.
func (r *Reader) ReadFrame() (h Header, p []byte, owned bool, err error) {
	h, p, err = r.readFrame()
	return h, p, err == nil && len(p) > r.r.Size(), err
}

func (r *Reader) readFrame() (Header, []byte, error) {
	head, err := r.r.Peek(HeaderLen)
	if err != nil {
		if err == io.EOF && len(head) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return Header{}, nil, err
	}
	h, err := ParseHeader(head, r.maxPayload)
	if err != nil {
		return h, nil, err
	}
	r.r.Discard(HeaderLen)
	if h.Length == 0 {
		return h, nil, nil
	}
	// Small payloads are read from the buffer in place; larger ones into
	// a buffer that grows only as frames that large arrive.
	if int(h.Length) <= r.r.Size() {
		p, err := r.r.Peek(int(h.Length))
		if err != nil {
			return h, nil, truncated(h, err)
		}
		r.r.Discard(len(p))
		return h, p, nil
	}
	p := make([]byte, h.Length)
	if _, err := io.ReadFull(r.r, p); err != nil {
		return h, nil, truncated(h, err)
	}
	return h, p, nil
}

func truncated(h Header, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("shmwire: reading a %v frame of %d bytes: %w", h.Type, h.Length, err)
}

// AppendFrame appends a frame of the given header fields and payload to
// b.
func AppendFrame(b []byte, stream uint32, t Type, flags uint8, payload []byte) []byte {
	b = Header{Length: uint32(len(payload)), Stream: stream, Type: t, Flags: flags}.Append(b)
	return append(b, payload...)
}
