package handover

import (
	"reflect"

	"google.golang.org/protobuf/runtime/protoimpl"
)

// What this package assumes of the structs protoc-gen-go and older
// generators make, in one place; layout_test.go pins each assumption
// against the generated code linked into the tests, so that a protobuf-go
// release that changes them fails there, loudly, rather than here,
// silently.

var messageStateType = reflect.TypeFor[protoimpl.MessageState]()

// isGenerated reports whether st is a struct protoc-gen-go generated: its
// first field is its message state, named state. (A field of that name
// promoted from an embedded message does not count: a struct that embeds
// one is not one.)
func isGenerated(st reflect.Type) bool {
	return st.NumField() > 0 && st.Field(0).Name == "state" && st.Field(0).Type == messageStateType
}

// isSizeCache reports whether f is a message's size cache, which Marshal
// and Size store atomically: protoc-gen-go's sizeCache, older generators'
// XXX_sizecache.
func isSizeCache(f reflect.StructField) bool {
	return f.Name == "sizeCache" || f.Name == "XXX_sizecache"
}

// unknownField returns the offset of st's unknown fields, kept as their
// wire bytes: protoc-gen-go's unknownFields, older generators' and
// gogoproto's XXX_unrecognized.
func unknownField(st reflect.Type) (uintptr, bool) {
	for _, name := range []string{"unknownFields", "XXX_unrecognized"} {
		if f, ok := st.FieldByName(name); ok && len(f.Index) == 1 && f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8 {
			return f.Offset, true
		}
	}
	return 0, false
}

// hasLazyFields reports whether st, a generated struct, has fields that
// are decoded lazily, by generated getters that load and store them
// atomically: the opaque API's [lazy = true] message fields, whose
// decoding state is kept in XXX_lazyUnmarshalInfo.
func hasLazyFields(st reflect.Type) bool {
	_, ok := st.FieldByName("XXX_lazyUnmarshalInfo")
	return ok
}

// extensionsField returns the offset of st's extensions, a map a
// top-level copy would share: protoc-gen-go's extensionFields.
func extensionsField(st reflect.Type) (uintptr, bool) {
	if f, ok := st.FieldByName("extensionFields"); ok && len(f.Index) == 1 && f.Type.Kind() == reflect.Map {
		return f.Offset, true
	}
	return 0, false
}

// isReceiversOwn reports whether f is state that generated code keeps for
// the one message, which a receiver's top-level copy must not take from
// the sender's: the opaque API's race-detector shadow of its presence
// bits and its lazy-decoding state.
func isReceiversOwn(f reflect.StructField) bool {
	return f.Name == "XXX_raceDetectHookData" || f.Name == "XXX_lazyUnmarshalInfo"
}
