package handover

import (
	"math"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	gproto "google.golang.org/protobuf/proto"
)

// The plans' entry points as the tests use them, by the plans last holds.

// measureKnown measures m by the plans last holds, if they are of m's
// type; ok is false otherwise.
func measureKnown(m any, last *atomic.Pointer[strategy]) (n int, err error, ok bool) {
	tp, at := known(m, last)
	if tp == nil || tp.name == "wire" {
		return 0, nil, false
	}
	n, wire, err := tp.measure(m, at)
	if wire {
		b, err := proto.Marshal(protoMessage(m))
		return len(b), err, true
	}
	return n, err, true
}

// cloneKnown returns a deep copy of m by the plans last holds, if they are
// of m's type and flat.
func cloneKnown(m any, last *atomic.Pointer[strategy]) (any, bool) {
	tp, at := known(m, last)
	if tp == nil || tp.sizer == nil {
		return nil, false
	}
	return tp.clone(at, nil), true
}

// copyKnown makes dst a deep copy of m by the plans last holds, if they
// are of m's type and flat and dst is of that type.
func copyKnown(dst, m any, last *atomic.Pointer[strategy]) bool {
	tp, at := known(m, last)
	if tp == nil || tp.sizer == nil {
		return false
	}
	d := tp.of(dst)
	if d == nil {
		return false
	}
	tp.deepCopy(d, at)
	return true
}

// measure refuses what protobuf's Marshal refuses, so that a message a
// socket could not carry is not carried in-process either: a proto2
// required field left unset, and a string that must be UTF-8 (proto3, or
// an edition that says so) and is not; and it returns the message's
// encoded size. No bytes are copied: the walk reads the fields through
// plans made once per Go type and kept in last.
func measure(m gproto.Message, last *atomic.Pointer[strategy]) (int, error) {
	if !m.ProtoReflect().IsValid() {
		return 0, gproto.CheckInitialized(m) // a typed nil encodes as an empty message
	}
	tp, at := strategyOf(m, last)
	n, wire, err := tp.measure(m, at)
	if wire {
		b, err := gproto.Marshal(m)
		return len(b), err
	}
	return n, err
}

// measure checks and measures m, at at, by whichever of s's plans the
// send functions would use; a message the wire strategy sends, by the
// checked strategy's plans, which the tests hold to protobuf's Marshal
// for every type.
func (s *strategy) measure(m any, at addr) (int, bool, error) {
	if s.sizer != nil {
		v, n, err := s.fitFlat(m, at, Limits{MaxSend: math.MaxInt, MaxRecv: math.MaxInt})
		_, wire := v.(*wire)
		return n, wire, err
	}
	if s.name == "wire" {
		s = &strategy{utf8: utf8PlanFor(s.t, s.md), initCheck: true}
	}
	n, err := s.measureChecked(m, at)
	return n, false, err
}

// sendAs is dir.Send with mode.
func sendAs(m any, mode Mode, dir Direction) (any, int, error) {
	dir.Mode = mode
	return dir.Send(m)
}
