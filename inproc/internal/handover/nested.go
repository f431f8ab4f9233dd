package handover

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A message shared with Share keeps its nested messages the sender's,
// which a socket's receiver would have decoded: a nested message with
// unknown fields would have had them parsed (or refused, if malformed),
// and a nesting past protobuf's recursion limit refused. Such a message
// goes through its wire encoding instead, whose decoding gives exactly
// the socket's verdict. Both are rare, so the bound is loose: past
// shareDepth levels, the wire decides.
const shareDepth = 100

// hasNested reports whether a message of md may hold messages.
func hasNested(md protoreflect.MessageDescriptor) bool {
	if md.ExtensionRanges().Len() > 0 {
		return true
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Message() != nil {
			return true
		}
	}
	return false
}

// nestedNeedsWire reports whether a message nested in m, at depth levels
// from the top, holds unknown fields or lies deeper than shareDepth.
func nestedNeedsWire(m protoreflect.Message, depth int) bool {
	if depth > shareDepth {
		return true
	}
	need := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsExtension():
			need = true // see send: the receiver's registry decides
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					need = messageNeedsWire(mv.Message(), depth+1)
					return !need
				})
			}
		case fd.Message() == nil:
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && !need; i++ {
				need = messageNeedsWire(l.Get(i).Message(), depth+1)
			}
		default:
			// A nil message field is unset, but a oneof holding a nil
			// message is set, and its receiver gets an empty one.
			if m := v.Message(); m.IsValid() || fd.ContainingOneof() != nil {
				need = messageNeedsWire(m, depth+1)
			}
		}
		return !need
	})
	return need
}

// messageNeedsWire is nestedNeedsWire for m itself: a nil message in a
// list or map needs the wire too, whose receiver gets an empty one.
func messageNeedsWire(m protoreflect.Message, depth int) bool {
	return !m.IsValid() || len(m.GetUnknown()) > 0 || nestedNeedsWire(m, depth)
}
