package shmwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Magic opens every connection, before the hello. It shares no prefix
// with HTTP/2's client preface, so a server can tell a grpc-go client
// from a localgrpc one by the first bytes.
const Magic = "LGRPCSHM"

// http2Preface is how every HTTP/2 client connection begins.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// IsHTTP2 says whether b, the first bytes a client sent, begin HTTP/2's
// client preface: a grpc-go, grpcurl or other gRPC client, not ours.
func IsHTTP2(b []byte) bool {
	n := min(len(b), len(http2Preface))
	return n > 0 && string(b[:n]) == http2Preface[:n]
}

// Version is the highest version of the framing this code speaks.
const Version = 1

// Feature bits a side offers in its hello; a connection uses those both
// offer.
const (
	// FeatureRings offers shared-memory rings after the hello.
	FeatureRings uint64 = 1 << iota
	// FeatureSized offers to take messages sent in several frames with
	// their length first (see Sized).
	FeatureSized
)

// Hello is what each side sends first.
type Hello struct {
	Version  uint64 // the highest version the sender speaks
	Features uint64 // what the sender offers
	MaxFrame uint32 // the largest payload the sender accepts in a frame
	Window   uint32 // the credit the sender grants each new stream, in bytes
	ConnWin  uint32 // the credit the sender grants the connection, in bytes
}

// Minimums a hello must grant: a frame that holds any header, a window
// that holds a frame.
const (
	MinFrame  = 1 << 10
	MinWindow = 1 << 10
)

// WriteHello writes the magic and h to w.
func WriteHello(w io.Writer, h Hello) error {
	var body []byte
	body = binary.AppendUvarint(body, h.Version)
	body = binary.AppendUvarint(body, h.Features)
	body = binary.AppendUvarint(body, uint64(h.MaxFrame))
	body = binary.AppendUvarint(body, uint64(h.Window))
	body = binary.AppendUvarint(body, uint64(h.ConnWin))
	b := append([]byte(Magic), byte(len(body)))
	_, err := w.Write(append(b, body...))
	return err
}

// ErrHTTP2 is returned by ReadHello when the peer began HTTP/2's preface.
var ErrHTTP2 = fmt.Errorf("shmwire: the peer speaks HTTP/2 (a grpc-go or other gRPC client), not localgrpc's shm: framing")

// HelloHeadLen is what ReadHello reads before it knows whether the peer
// speaks the framing: the magic and the hello's length.
const HelloHeadLen = len(Magic) + 1

// ErrHTTP2Server is returned by ReadHello when the peer began with an
// HTTP/2 SETTINGS frame, as an HTTP/2 server does.
var ErrHTTP2Server = fmt.Errorf("shmwire: the server speaks HTTP/2 (a grpc-go server, say), not localgrpc's shm: framing: dial it with unix:")

// ReadHello reads the peer's magic and hello from r, and checks them.
func ReadHello(r io.Reader) (Hello, error) {
	var head [HelloHeadLen]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return Hello{}, fmt.Errorf("shmwire: reading the hello: %w", err)
	}
	if IsHTTP2(head[:]) {
		return Hello{}, ErrHTTP2
	}
	if head[3] == 0x4 && head[4] == 0 { // an HTTP/2 frame header: SETTINGS, no flags
		return Hello{}, ErrHTTP2Server
	}
	if !bytes.Equal(head[:len(Magic)], []byte(Magic)) {
		return Hello{}, fmt.Errorf("shmwire: the peer's first bytes %q are not localgrpc's shm: hello", head[:len(Magic)])
	}
	body := make([]byte, head[len(Magic)])
	if _, err := io.ReadFull(r, body); err != nil {
		return Hello{}, fmt.Errorf("shmwire: reading the hello: %w", err)
	}
	d := decoder{p: body, what: "hello"}
	h := Hello{Version: d.uvarint(), Features: d.uvarint()}
	maxFrame, window, connWin := d.uvarint(), d.uvarint(), d.uvarint()
	// Later versions may add fields: what follows is theirs.
	if d.err != nil {
		return h, d.err
	}
	switch {
	case h.Version < 1:
		return h, fmt.Errorf("shmwire: the peer's hello has version %d", h.Version)
	case maxFrame < MinFrame || maxFrame > 1<<31-1:
		return h, fmt.Errorf("shmwire: the peer's hello accepts frames of %d bytes, want %d to %d", maxFrame, MinFrame, 1<<31-1)
	case window < MinWindow || window > 1<<31-1 || connWin < MinWindow || connWin > 1<<31-1:
		return h, fmt.Errorf("shmwire: the peer's hello grants windows of %d and %d bytes, want %d to %d", window, connWin, MinWindow, 1<<31-1)
	}
	h.MaxFrame, h.Window, h.ConnWin = uint32(maxFrame), uint32(window), uint32(connWin)
	return h, nil
}

// Agree is what a connection uses, given both hellos.
func Agree(mine, theirs Hello) (version, features uint64) {
	return min(mine.Version, theirs.Version), mine.Features & theirs.Features
}
