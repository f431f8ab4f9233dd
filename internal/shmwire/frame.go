package shmwire

import (
	"encoding/binary"
	"fmt"
)

// HeaderLen is the size of a frame header: length (4), stream (4), type
// (1), flags (1).
const HeaderLen = 10

// Type says what a frame's payload is.
type Type uint8

const (
	// Headers opens a call (client) or carries the response header
	// metadata (server).
	Headers Type = iota + 1
	// Message carries all or, with More, part of one encoded message.
	Message
	// Trailers ends a call with its status and trailer metadata (server).
	Trailers
	// Cancel ends a call early, from either side, with a code.
	Cancel
	// Window returns flow-control credit: for a stream, or on stream 0 for
	// the connection.
	Window
	// GoAway says the sender takes no call with a higher id.
	GoAway
	lastType = GoAway
)

func (t Type) String() string {
	switch t {
	case Headers:
		return "HEADERS"
	case Message:
		return "MESSAGE"
	case Trailers:
		return "TRAILERS"
	case Cancel:
		return "CANCEL"
	case Window:
		return "WINDOW"
	case GoAway:
		return "GOAWAY"
	}
	return fmt.Sprintf("TYPE(%d)", uint8(t))
}

// Flags qualify a frame.
const (
	// More marks a Message frame whose message continues in the next
	// Message frame of the stream.
	More uint8 = 1 << iota
	// End marks the last frame the sender sends on the stream: a client's
	// CloseSend, on a Message or an empty Message frame.
	End
	// Sized marks the first Message frame of a message sent in several
	// frames: its payload begins with the whole message's length (see
	// AppendSize), so that the receiver refuses one over its limit at
	// once and gathers the rest without growing a buffer. It needs More,
	// and FeatureSized offered by the receiver.
	Sized
	knownFlags = More | End | Sized
)

// SizeLen is the bytes of the length a Sized frame begins with.
const SizeLen = 4

// AppendSize appends the length of a message sent in several frames, as
// a Sized frame's payload begins.
func AppendSize(b []byte, n uint32) []byte { return binary.BigEndian.AppendUint32(b, n) }

// ParseSize splits a Sized frame's payload into the message's length and
// the first of its bytes.
func ParseSize(p []byte) (uint32, []byte, error) {
	if len(p) < SizeLen {
		return 0, nil, fmt.Errorf("shmwire: a sized frame of %d bytes", len(p))
	}
	return binary.BigEndian.Uint32(p), p[SizeLen:], nil
}

// Header is a frame's header.
type Header struct {
	Length uint32 // of the payload that follows
	Stream uint32 // 0 for the connection
	Type   Type
	Flags  uint8
}

// Append appends h in its wire form to b.
func (h Header) Append(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, h.Length)
	b = binary.BigEndian.AppendUint32(b, h.Stream)
	return append(b, byte(h.Type), h.Flags)
}

// ParseHeader reads a header from the HeaderLen bytes of b and checks it
// against what a peer may send: a known type and flags, a payload of at
// most maxPayload, a stream id where the type needs one.
func ParseHeader(b []byte, maxPayload uint32) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("shmwire: frame header of %d bytes, want %d", len(b), HeaderLen)
	}
	h := Header{
		Length: binary.BigEndian.Uint32(b),
		Stream: binary.BigEndian.Uint32(b[4:]),
		Type:   Type(b[8]),
		Flags:  b[9],
	}
	switch {
	case h.Type == 0 || h.Type > lastType:
		return h, fmt.Errorf("shmwire: unknown frame type %d", uint8(h.Type))
	case h.Flags&^knownFlags != 0:
		return h, fmt.Errorf("shmwire: %v frame with unknown flags %#x", h.Type, h.Flags)
	case h.Flags&More != 0 && h.Type != Message:
		return h, fmt.Errorf("shmwire: %v frame flagged More", h.Type)
	case h.Flags&Sized != 0 && h.Flags&More == 0:
		return h, fmt.Errorf("shmwire: %v frame flagged Sized without More", h.Type)
	case h.Length > maxPayload:
		return h, fmt.Errorf("shmwire: %v frame of %d bytes, over the limit of %d", h.Type, h.Length, maxPayload)
	case h.Stream == 0 && h.Type != Window && h.Type != GoAway:
		return h, fmt.Errorf("shmwire: %v frame on stream 0", h.Type)
	case h.Stream != 0 && h.Type == GoAway:
		return h, fmt.Errorf("shmwire: GOAWAY frame on stream %d", h.Stream)
	}
	return h, nil
}
