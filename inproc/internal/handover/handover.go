package handover

import (
	"math"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto" // registers the "proto" codec
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// The limits grpc-go applies when none is set.
const (
	DefaultMaxRecvMsgSize = 4 << 20
	DefaultMaxSendMsgSize = math.MaxInt32
)

// A Direction is one direction of a call's messages, fixed when the call
// begins: the limits, the Slot of the method's messages that way, the copy
// mode, and the codec the call forces, if any. Its methods do the
// hand-over; they keep no pointer to it, so a Direction may live on the
// caller's stack.
type Direction struct {
	Limits
	Slot  *Slot
	Mode  Mode
	Codec encoding.CodecV2 // nil: protobuf's, by the plans
}

// Limits is what a send function needs of its Direction: the sender's and
// the receiver's size limits, and the stream's Spare, if any.
type Limits struct {
	MaxSend, MaxRecv int
	Spare            *Spare
}

// A Slot is what one direction of one method keeps between its messages:
// the strategy of the type last sent (see strategy), so that the
// messages of the one type most methods carry are recognised by their
// type word. The zero Slot is ready to use.
type Slot struct {
	last atomic.Pointer[strategy]
}

// A Mode says how a message passes to its receiver: as a deep copy, or
// sharing all but its top level (see the inproc package's CopyMode).
type Mode uint8

const (
	Clone Mode = iota
	Share
	// Encode passes every message as its encoding by the call's codec,
	// as a network does: for a transport that carries calls between
	// processes, whose side of a call sends and receives
	// *inprocconn.Encoded.
	Encode
)

// A message crosses from its sender to its receiver in two steps: Send, on
// the sender's goroutine before its SendMsg returns, checks the message as
// grpc-go's encoding would and takes what the receiver will get; Receive,
// on the receiver's, gives it to the message the receiver allocated. With
// Clone, what Send takes is a copy, so a sender may reuse its message as
// soon as SendMsg returns, as it may with grpc-go, where SendMsg
// serializes it; with Share it is the message itself, whose top level the
// receiver copies when it receives it.
//
// What Send takes, the parcel, is one of: the sender's message itself
// (Share), a deep copy of it (Clone), its wire encoding (*wire: what
// cannot be copied exactly otherwise), its encoding by a codec
// (*encoded), or the stand-in of a message over the receiver's limit
// (*tooLarge).

// tooLarge stands in for a message over the receiver's limit: the receiver
// refuses it, as grpc-go's does, and nothing of it is kept.
type tooLarge struct{ size, limit int }

// encoded is a message that went through a codec, for messages that are
// not protobuf and calls that force a codec.
type encoded struct{ data mem.BufferSlice }

// Send checks m and returns what its receiver gets, and m's encoded size.
// An error is the sender's, as grpc-go's SendMsg gives it.
func (d *Direction) Send(m any) (any, int, error) {
	if d.Codec == nil && d.Mode != Encode {
		if s, at := known(m, &d.Slot.last); s != nil {
			return s.sends[d.Mode](s, m, at, d.Limits, nil)
		}
	}
	return d.sendOther(m)
}

// sendOther is Send for a message of a type the Slot does not hold, or
// through a codec.
func (d *Direction) sendOther(m any) (any, int, error) {
	if m == nil {
		return &encoded{}, 0, nil // grpc-go sends an untyped nil as empty
	}
	if d.Codec != nil || d.Mode == Encode {
		return sendEncoded(m, d.Codec, d.Limits)
	}
	s, at := strategyOf(m, &d.Slot.last)
	if s == nil {
		return sendEncoded(m, nil, d.Limits)
	}
	return s.sends[d.Mode](s, m, at, d.Limits, nil)
}

// Transfer is Send and Receive at once, for a receiver that has its
// message dst at hand: with Clone, dst gets the deep copy itself. It
// returns Send's refusal (sendErr) apart from Receive's (recvErr), since
// over a socket the one is the sender's status and the other the
// receiver's.
func (d *Direction) Transfer(dst, m any) (n int, sendErr, recvErr error) {
	var tp *strategy
	var at addr
	if m != nil && d.Codec == nil && d.Mode != Encode {
		tp, at = lookup(m, &d.Slot.last)
	}
	var v any
	if tp != nil {
		v, n, sendErr = tp.sends[d.Mode](tp, m, at, d.Limits, tp.of(dst))
	} else {
		v, n, sendErr = d.Send(m)
	}
	if sendErr != nil || v == delivered {
		return n, sendErr, nil
	}
	return n, nil, d.Receive(dst, v)
}

// delivered is what send returns when it copied the message into the
// receiver's message itself.
var delivered any = new(struct{ delivered bool })

// lookup returns m's strategy and address: the one last holds, found by
// m's type word, or the one found and kept there now; nil if m is not a
// protobuf message.
func lookup(m any, last *atomic.Pointer[strategy]) (*strategy, addr) {
	if tp, at := known(m, last); tp != nil {
		return tp, at
	}
	return strategyOf(m, last)
}

// sendEncoded sends m through codec (protobuf's, if nil), as a network
// does. A message a transport received encoded is sent as it came.
func sendEncoded(m any, codec encoding.CodecV2, lim Limits) (any, int, error) {
	if e, ok := m.(*inprocconn.Encoded); ok {
		if e.Lost != nil {
			return nil, 0, e.Lost
		}
		if e.Oversize > 0 {
			return &tooLarge{size: e.Oversize, limit: e.Limit}, e.Oversize, nil
		}
		n := e.Data.Len()
		if v, err := checkLimits(n, lim); v != nil || err != nil {
			return v, n, err
		}
		return &encoded{data: e.Data}, n, nil
	}
	if codec == nil {
		codec = encoding.GetCodecV2(proto.Name)
	}
	data, err := codec.Marshal(m)
	if err != nil {
		return nil, 0, marshalError(err)
	}
	n := data.Len()
	if v, err := checkLimits(n, lim); v != nil || err != nil {
		data.Free()
		return v, n, err
	}
	return &encoded{data: data}, n, nil
}

func marshalError(err error) error {
	return status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
}

// checkLimits refuses a message of n bytes over the sender's limit, and
// returns the stand-in of one over the receiver's. The refusal's message
// is grpc-go's, client's and server's alike (stream.go SendMsg), which
// has no "grpc: " prefix, unlike its receiver's.
func checkLimits(n int, lim Limits) (any, error) {
	if n > lim.MaxSend {
		return nil, status.Errorf(codes.ResourceExhausted, "trying to send message larger than max (%d vs. %d)", n, lim.MaxSend)
	}
	if n > lim.MaxRecv {
		return &tooLarge{size: n, limit: lim.MaxRecv}, nil
	}
	return nil, nil
}

// over reports whether a message of n bytes is over either limit, which
// overLimits then says what to do with: the test most messages pass is
// two comparisons, inline.
func (lim *Limits) over(n int) bool {
	return n > lim.MaxSend || n > lim.MaxRecv
}

// overLimits is checkLimits for a message over a limit.
func overLimits(n int, lim Limits) (any, int, error) {
	v, err := checkLimits(n, lim)
	return v, n, err
}

// Receive gives dst, a message the receiver allocated, what Send returned.
func (d *Direction) Receive(dst, v any) error {
	// The common case inline, in small frames: a unary handler receives
	// on a new goroutine, whose small stack would otherwise grow (a copy
	// of the stack costs more than the whole hand-over).
	s := d.Slot.last.Load()
	if at, from := s.tops(dst, v); at != nil && from != nil {
		s.top.copy(at, from)
		return nil
	}
	return d.receiveUnknown(dst, v)
}

// receiveUnknown is Receive for what the Slot's strategy does not copy.
//
//go:noinline
func (d *Direction) receiveUnknown(dst, v any) error {
	if shallowCopyPlanned(dst, v) {
		return nil
	}
	return receiveOther(dst, v, d.Codec)
}

// receiveOther is Receive for what shallowCopy cannot give dst: a
// stand-in, an encoding, a message of another type, or a dynamic message.
//
//go:noinline
func receiveOther(dst, v any, codec encoding.CodecV2) error {
	if e, ok := dst.(*inprocconn.Encoded); ok {
		return receiveEncoded(e, v, codec)
	}
	switch v := v.(type) {
	case *tooLarge:
		return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", v.size, v.limit)
	case *wire:
		return v.decode(dst)
	case *encoded:
		if codec == nil {
			codec = encoding.GetCodecV2(proto.Name)
		}
		defer v.data.Free()
		if err := codec.Unmarshal(v.data, dst); err != nil {
			return unmarshalError(err)
		}
		return nil
	}
	return receiveOtherType(dst, v)
}

// receiveEncoded gives a transport's side of a call the encoding of v, as
// it sends it on.
func receiveEncoded(dst *inprocconn.Encoded, v any, codec encoding.CodecV2) error {
	switch v := v.(type) {
	case *tooLarge:
		return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", v.size, v.limit)
	case *encoded:
		dst.Data = v.data
		return nil
	}
	if codec == nil {
		codec = encoding.GetCodecV2(proto.Name)
	}
	data, err := codec.Marshal(v)
	if err != nil {
		return marshalError(err)
	}
	dst.Data = data
	return nil
}

// receiveOtherType gives dst the message v of another Go type (a
// dynamicpb message on one side, say), or a dynamic message, through the
// wire format, as a network would.
func receiveOtherType(dst, v any) error {
	if sm := protoMessage(v); sm != nil {
		b, err := gproto.Marshal(sm)
		if err != nil {
			return marshalError(err)
		}
		return (&wire{b: b, from: wordOf(v)}).decode(dst)
	}
	if sc, ok := v.(selfCoder); ok {
		b, err := sc.Marshal()
		if err != nil {
			return marshalError(err)
		}
		return (&wire{b: b, from: wordOf(v)}).decode(dst)
	}
	return cannotGive(v, dst)
}

func cannotGive(v, dst any) error {
	return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: cannot give a %T to a %T", v, dst)
}

func unmarshalError(err error) error {
	return status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
}

// shallowCopy sets *dst to *src when both are pointers to the same struct
// type, so the receiver owns the top-level message and shares what its
// fields point to, except what shallowPlan gives the receiver its own;
// not for dynamic messages (see receiveOtherType). It reports whether it
// could. last, when not nil, holds the strategy of the type the sender
// last sent, most likely dst's: then the copy runs in small frames, by
// one load of the strategy.
func shallowCopy(dst, src any, last *atomic.Pointer[strategy]) bool {
	if last != nil {
		s := last.Load()
		if at, from := s.tops(dst, src); at != nil && from != nil {
			s.top.copy(at, from)
			return true
		}
	}
	return shallowCopyPlanned(dst, src)
}

// tops returns the addresses of dst and src if both are messages of s's
// type, a strategy a Slot holds (nil if none), whose top level s copies
// by moves; nil otherwise.
func (s *strategy) tops(dst, src any) (addr, addr) {
	if s == nil || s.top == nil || wordOf(dst) != s.word || wordOf(src) != s.word {
		return nil, nil
	}
	return dataWord(dst), dataWord(src)
}

// shallowCopyPlanned is shallowCopy through the plans of every type.
//
//go:noinline
func shallowCopyPlanned(dst, src any) bool {
	d, s, st, ok := sameStructs(dst, src)
	if !ok {
		return false
	}
	p := shallowPlanFor(st)
	if p.dynamic {
		return false
	}
	p.copy(d, s)
	return true
}

// protoMessage returns m as a protobuf message, or nil if it is not one.
func protoMessage(m any) gproto.Message {
	switch m := m.(type) {
	case gproto.Message:
		return m
	case protoadapt.MessageV1:
		return protoadapt.MessageV2Of(m)
	}
	return nil
}
