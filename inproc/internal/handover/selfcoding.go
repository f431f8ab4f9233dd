package handover

import (
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
// protobuf calls to encode it, whatever else it has.
type legacyMarshaler interface {
	Marshal() ([]byte, error)
}

// sendSelfCoding is Send for m, a selfCoder of tp's type. Its own Marshal
// checks no UTF-8, and neither does this, as over a socket; required
// fields are checked as protobuf's Marshal checks them after it.
func (tp *typedPlan) sendSelfCoding(m any, mode Mode, dir Direction) (any, int, error) {
	if tp.initCheck {
		if err := gproto.CheckInitialized(protoMessage(m)); err != nil {
			return nil, 0, marshalError(err)
		}
	}
	sc := m.(selfCoder)
	if mode == Clone {
		b, err := sc.Marshal()
		if err != nil {
			return nil, 0, marshalError(err)
		}
		return fitWire(&wire{b: b, from: tp.word, checked: !tp.initCheck}, dir)
	}
	n := sc.Size()
	if v, err := checkLimits(n, dir); v != nil || err != nil {
		return v, n, err
	}
	return m, n, nil
}
