package handover

import (
	gproto "google.golang.org/protobuf/proto"
)

// wire is a message in its wire encoding, made by protobuf's Marshal or a
// self-coding message's own, as grpc-go's codec would make it: what its
// receiver gets where nothing else copies exactly what a socket carries.
// Each message has its own bytes, which lazy fields and gogoproto's
// custom types may keep referring to after decoding.
type wire struct {
	b []byte
	// from is the type word of the message encoded, and checked says
	// that its type holds no required field, so that a self-coding
	// receiver of the same type need not look for unset ones.
	from    typeWord
	checked bool
}

// sendWire encodes m for its receiver.
func sendWire(m any, lim Limits) (any, int, error) {
	b, err := gproto.Marshal(protoMessage(m))
	if err != nil {
		return nil, 0, marshalError(err)
	}
	return fitWire(&wire{b: b}, lim)
}

// fitWire is what the receiver gets of w, which the limits may refuse.
func fitWire(w *wire, lim Limits) (any, int, error) {
	n := len(w.b)
	if v, err := checkLimits(n, lim); v != nil || err != nil {
		return v, n, err
	}
	return w, n, nil
}

// decode gives dst the message, as grpc-go's codec decodes it: by dst's
// own Unmarshal if it is a self-coding message, then protobuf's check of
// its required fields; by protobuf's Unmarshal otherwise, with its
// recursion limit and the same check.
func (w *wire) decode(dst any) error {
	if sc, ok := dst.(selfCoder); ok && !isV2(dst) {
		sc.Reset()
		if err := sc.Unmarshal(w.b); err != nil {
			return unmarshalError(err)
		}
		if !w.checked || w.from != wordOf(dst) {
			if err := gproto.CheckInitialized(protoMessage(dst)); err != nil {
				return unmarshalError(err)
			}
		}
		return nil
	}
	dm := protoMessage(dst)
	if dm == nil {
		return cannotGive(w, dst)
	}
	if err := gproto.Unmarshal(w.b, dm); err != nil {
		return unmarshalError(err)
	}
	return nil
}

// isV2 reports whether m is a message of protobuf-go's API, which grpc-go
// encodes by protobuf's Marshal whatever other methods it has.
func isV2(m any) bool {
	_, ok := m.(gproto.Message)
	return ok
}
