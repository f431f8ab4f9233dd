package handover

import (
	"reflect"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A sizePlan measures a message as proto.Size does and checks its strings
// as measure does, in one walk over the generated struct, for the
// messages whose every field it knows: strings, bytes and most scalars
// without presence, repeated strings, and unknown fields; no nested
// messages, maps, oneofs or extensions.
// Those are most of the small messages a stream carries one after another,
// where proto.Size alone cost as much as the whole hand-over; the rest go
// through proto.Size.
type sizePlan struct {
	fields []sizeField
}

type sizeField struct {
	offset uintptr
	kind   sizeKind
	tag    int  // the size of the field's tag
	utf8   bool // a string that must be UTF-8
	fd     protoreflect.FieldDescriptor
}

type sizeKind uint8

// The kinds of field a sizePlan knows, each sent unless it is zero (a
// float's bits: -0 is sent). Others (zigzag and fixed integers, fields
// with presence, repeated scalars, which are packed) go through proto.Size.
const (
	sizeString     sizeKind = iota // string
	sizeStringList                 // []string, every element sent
	sizeBytes                      // []byte
	sizeBool                       // bool
	sizeInt32                      // int32 and enums, sign-extended
	sizeInt64                      // int64
	sizeUint32                     // uint32
	sizeUint64                     // uint64
	sizeFloat                      // float: 4 bytes
	sizeDouble                     // double: 8 bytes
	sizeUnknown                    // the unknown fields, as they are
)

// buildSizePlan makes the size plan of st, the generated struct of md, or
// returns nil if st has a field the plan does not know.
func buildSizePlan(st reflect.Type, md protoreflect.MessageDescriptor) *sizePlan {
	if md.ExtensionRanges().Len() > 0 || md.Oneofs().Len() > 0 || !generatedStruct(st, md) {
		return nil
	}
	p := &sizePlan{}
	for i := range st.NumField() {
		sf := st.Field(i)
		switch {
		case sf.Type == messageStateType || sf.Type.Size() == 0:
			continue
		case sf.Name == "sizeCache" || sf.Name == "XXX_sizecache":
			continue
		case sf.Name == "unknownFields" || sf.Name == "XXX_unrecognized":
			if sf.Type.Kind() != reflect.Slice || sf.Type.Elem().Kind() != reflect.Uint8 {
				return nil
			}
			p.fields = append(p.fields, sizeField{offset: sf.Offset, kind: sizeUnknown})
			continue
		}
		tag, ok := sf.Tag.Lookup("protobuf")
		if !ok {
			return nil // extensions, weak fields, or what this plan cannot tell
		}
		fd := fieldByTag(md, tag)
		if fd == nil {
			return nil
		}
		kind, ok := sizeKindOf(fd, sf.Type)
		if !ok {
			return nil
		}
		p.fields = append(p.fields, sizeField{
			offset: sf.Offset, kind: kind, fd: fd,
			tag:  protowire.SizeTag(fd.Number()),
			utf8: fd.Kind() == protoreflect.StringKind && enforceUTF8(fd),
		})
	}
	return p
}

// sizeKindOf tells how to measure fd, held in a Go field of type t.
func sizeKindOf(fd protoreflect.FieldDescriptor, t reflect.Type) (sizeKind, bool) {
	if fd.IsMap() || fd.IsWeak() || fd.Message() != nil || fd.HasPresence() {
		return 0, false
	}
	want, elem := sizeKinds[fd.Kind()], t
	if fd.IsList() {
		if fd.Kind() != protoreflect.StringKind || t.Kind() != reflect.Slice {
			return 0, false
		}
		want.kind, elem = sizeStringList, t.Elem()
	}
	if want.goes == reflect.Invalid || elem.Kind() != want.goes || want.goes == reflect.Slice && elem.Elem().Kind() != reflect.Uint8 {
		return 0, false
	}
	return want.kind, true
}

// sizeKinds is how each kind of field a sizePlan knows is measured, and
// the kind of Go value that holds it.
var sizeKinds = map[protoreflect.Kind]struct {
	kind sizeKind
	goes reflect.Kind
}{
	protoreflect.StringKind: {sizeString, reflect.String},
	protoreflect.BytesKind:  {sizeBytes, reflect.Slice},
	protoreflect.BoolKind:   {sizeBool, reflect.Bool},
	protoreflect.Int32Kind:  {sizeInt32, reflect.Int32},
	protoreflect.EnumKind:   {sizeInt32, reflect.Int32},
	protoreflect.Int64Kind:  {sizeInt64, reflect.Int64},
	protoreflect.Uint32Kind: {sizeUint32, reflect.Uint32},
	protoreflect.Uint64Kind: {sizeUint64, reflect.Uint64},
	protoreflect.FloatKind:  {sizeFloat, reflect.Float32},
	protoreflect.DoubleKind: {sizeDouble, reflect.Float64},
}

// size returns the encoded size of the message at base, or the error
// protobuf's Marshal gives for a string that is not UTF-8.
func (p *sizePlan) size(base unsafe.Pointer) (int, error) {
	n := 0
	for i := range p.fields {
		f := &p.fields[i]
		at := unsafe.Add(base, f.offset)
		switch f.kind {
		case sizeString:
			if s := *(*string)(at); s != "" {
				if f.utf8 && !validUTF8(s) {
					return 0, invalidUTF8(f.fd)
				}
				n += f.tag + protowire.SizeBytes(len(s))
			}
		case sizeStringList:
			for _, s := range *(*[]string)(at) {
				if f.utf8 && !validUTF8(s) {
					return 0, invalidUTF8(f.fd)
				}
				n += f.tag + protowire.SizeBytes(len(s))
			}
		case sizeBytes:
			if b := *(*[]byte)(at); len(b) > 0 {
				n += f.tag + protowire.SizeBytes(len(b))
			}
		case sizeBool:
			if *(*bool)(at) {
				n += f.tag + 1
			}
		case sizeInt32:
			if v := *(*int32)(at); v != 0 {
				n += f.tag + protowire.SizeVarint(uint64(int64(v)))
			}
		case sizeInt64:
			if v := *(*int64)(at); v != 0 {
				n += f.tag + protowire.SizeVarint(uint64(v))
			}
		case sizeUint32:
			if v := *(*uint32)(at); v != 0 {
				n += f.tag + protowire.SizeVarint(uint64(v))
			}
		case sizeUint64:
			if v := *(*uint64)(at); v != 0 {
				n += f.tag + protowire.SizeVarint(v)
			}
		case sizeFloat:
			if *(*uint32)(at) != 0 {
				n += f.tag + 4
			}
		case sizeDouble:
			if *(*uint64)(at) != 0 {
				n += f.tag + 8
			}
		case sizeUnknown:
			n += len(*(*[]byte)(at))
		}
	}
	return n, nil
}
