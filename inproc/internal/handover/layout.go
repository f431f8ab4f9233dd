package handover

import (
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
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

var sizeCacheType = reflect.TypeFor[protoimpl.SizeCache]()

// isSizeCache reports whether f is a message's size cache, which Marshal
// and Size store atomically.
// It is matched by name and type, as protobuf-go's impl package matches it:
//   - the name: protoc-gen-go's sizeCache, older generators' XXX_sizecache;
//   - the type: protoimpl.SizeCache, an int32.
func isSizeCache(f reflect.StructField) bool {
	return (f.Name == "sizeCache" || f.Name == "XXX_sizecache") && f.Type == sizeCacheType
}

// isUnknownFields reports whether f keeps a message's unknown fields, as
// their wire bytes.
// It is matched by name and type, as protobuf-go's impl package matches it:
//   - the name: protoc-gen-go's unknownFields, older generators' and
//     gogoproto's XXX_unrecognized;
//   - the type: protoimpl.UnknownFields, a []byte.
//
// protobuf-go also accepts a *[]byte, which no generator makes today; the
// plans do not read one, so such a field is not matched.
func isUnknownFields(f reflect.StructField) bool {
	return (f.Name == "unknownFields" || f.Name == "XXX_unrecognized") && f.Type == bytesType
}

// unknownField returns the offset of st's unknown fields.
func unknownField(st reflect.Type) (uintptr, bool) {
	for i := range st.NumField() {
		if f := st.Field(i); isUnknownFields(f) {
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
	if f, ok := st.FieldByName("extensionFields"); ok && len(f.Index) == 1 && f.Type == reflect.TypeFor[protoimpl.ExtensionFields]() {
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

// generatedStruct reports whether st is the generated struct of md: every
// field of md is a tagged field of st or a member of a tagged oneof.
func generatedStruct(st reflect.Type, md protoreflect.MessageDescriptor) bool {
	n := 0
	for i := range st.NumField() {
		sf := st.Field(i)
		if name, ok := oneofOf(sf); ok {
			od := md.Oneofs().ByName(protoreflect.Name(name))
			if od == nil {
				return false
			}
			n += od.Fields().Len()
		} else if fd, tagged := protoField(sf, md); tagged {
			if fd == nil {
				return false
			}
			n++
		}
	}
	return n == md.Fields().Len()
}

// fieldByTag finds the field a generated struct tag
// (`protobuf:"bytes,1,opt,name=text,proto3"`) describes.
func fieldByTag(md protoreflect.MessageDescriptor, tag string) protoreflect.FieldDescriptor {
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return nil
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return nil
	}
	return md.Fields().ByNumber(protoreflect.FieldNumber(n))
}

// protoField returns the field of md that sf holds, by sf's protobuf
// tag; tagged is false if sf has none (state, caches, extensions).
func protoField(sf reflect.StructField, md protoreflect.MessageDescriptor) (fd protoreflect.FieldDescriptor, tagged bool) {
	tag, ok := sf.Tag.Lookup("protobuf")
	if !ok {
		return nil, false
	}
	return fieldByTag(md, tag), true
}

// oneofOf returns the name of the oneof sf holds, if it holds one.
func oneofOf(sf reflect.StructField) (string, bool) {
	return sf.Tag.Lookup("protobuf_oneof")
}

// hasLegacyExtensions reports whether st, a legacy message's struct, keeps
// extensions (older generators' and gogoproto's XXX_InternalExtensions or
// XXX_extensions), in a map its top-level copy would share.
func hasLegacyExtensions(st reflect.Type) bool {
	for _, name := range []string{"XXX_InternalExtensions", "XXX_extensions"} {
		if _, ok := st.FieldByName(name); ok {
			return true
		}
	}
	return false
}

// isOneofBytes reports whether st is a oneof's wrapper of a bytes field:
// one []byte field tagged `protobuf:"bytes,5,opt,name=ob,proto3,oneof"`.
func isOneofBytes(st reflect.Type) bool {
	if st.NumField() != 1 || st.Field(0).Type != bytesType {
		return false
	}
	tag := st.Field(0).Tag.Get("protobuf")
	return strings.HasPrefix(tag, "bytes,") && strings.HasSuffix(tag, ",oneof")
}

// oneofWrappers returns the structs of the oneof wrappers that t, a
// pointer to a legacy message's struct, lists in its XXX_OneofWrappers.
// Older generators and gogoproto make that method.
// protobuf-go's legacy loader finds a legacy message's oneofs by it too.
func oneofWrappers(t reflect.Type) []reflect.Type {
	w, ok := reflect.Zero(t).Interface().(interface{ XXX_OneofWrappers() []any })
	if !ok {
		return nil
	}
	var structs []reflect.Type
	for _, wrapper := range w.XXX_OneofWrappers() {
		if wt := reflect.TypeOf(wrapper); wt != nil && wt.Kind() == reflect.Pointer && wt.Elem().Kind() == reflect.Struct {
			structs = append(structs, wt.Elem())
		}
	}
	return structs
}
