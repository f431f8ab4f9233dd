package handover

import (
	"reflect"

	gproto "google.golang.org/protobuf/proto"
)

// A selfCoder is a legacy message that encodes itself, as gogoproto's
// generated messages do. grpc-go's codec wraps it and protobuf calls its
// Marshal (twice: once to learn the size) and its Unmarshal; here Share
// calls its Size alone, and Clone its Marshal once and, on the receiver's
// side, its Unmarshal once.
type selfCoder interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
	Size() int
	Reset()
}

// A legacyMarshaler is a legacy message with a Marshal of its own, which
// protobuf calls to encode it, whatever else it has; a legacyUnmarshaler
// one with an Unmarshal of its own, which protobuf calls to decode it.
type legacyMarshaler interface {
	Marshal() ([]byte, error)
}

type legacyUnmarshaler interface {
	Unmarshal([]byte) error
}

// codesItselfWithin reports whether t, a pointer to a legacy message's
// struct, or a message it holds (in a field, a list, a map or a oneof
// whose wrappers XXX_OneofWrappers lists), has a Marshal or an Unmarshal
// of its own, which protobuf calls where it meets that message.
func codesItselfWithin(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || seen[t] {
		return false
	}
	seen[t] = true
	if t.Implements(legacyMarshalerType) || t.Implements(legacyUnmarshalerType) {
		return true
	}
	if fieldsCodeThemselves(t.Elem(), seen) {
		return true
	}
	for _, wt := range oneofWrappers(t) {
		if fieldsCodeThemselves(wt, seen) {
			return true
		}
	}
	return false
}

// fieldsCodeThemselves reports whether a field of the struct st holds a
// message (as itself, in a list or in a map) for which codesItselfWithin
// holds.
func fieldsCodeThemselves(st reflect.Type, seen map[reflect.Type]bool) bool {
	for i := range st.NumField() {
		ft := st.Field(i).Type
		switch ft.Kind() {
		case reflect.Slice, reflect.Map:
			ft = ft.Elem()
		}
		if codesItselfWithin(ft, seen) {
			return true
		}
	}
	return false
}

var (
	legacyMarshalerType   = reflect.TypeFor[legacyMarshaler]()
	legacyUnmarshalerType = reflect.TypeFor[legacyUnmarshaler]()
)

// shareSelfCoding is Share for a self-coding message: its own Marshal
// checks no UTF-8, and neither does this, as over a socket.
func shareSelfCoding(s *strategy, m any, at addr, lim Limits, _ addr) (any, int, error) {
	if s.unknownSet(at) {
		return sendWire(m, lim)
	}
	if err := s.checkInit(m); err != nil {
		return nil, 0, err
	}
	n := m.(selfCoder).Size()
	if v, err := checkLimits(n, lim); v != nil || err != nil {
		return v, n, err
	}
	return m, n, nil
}

// cloneSelfCoding is Clone for a self-coding message: encoded once by its
// own Marshal, decoded once by the receiver's Unmarshal.
func cloneSelfCoding(s *strategy, m any, at addr, lim Limits, _ addr) (any, int, error) {
	if s.unknownSet(at) {
		return sendWire(m, lim)
	}
	if err := s.checkInit(m); err != nil {
		return nil, 0, err
	}
	b, err := m.(selfCoder).Marshal()
	if err != nil {
		return nil, 0, marshalError(err)
	}
	return fitWire(&wire{b: b, from: s.word, checked: !s.initCheck}, lim)
}

// checkInit refuses m if it may hold required fields and leaves one
// unset, as protobuf's Marshal checks after a self-coding message's own
// Marshal.
func (s *strategy) checkInit(m any) error {
	if !s.initCheck {
		return nil
	}
	if err := gproto.CheckInitialized(protoMessage(m)); err != nil {
		return marshalError(err)
	}
	return nil
}
