package handover

import (
	"reflect"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A sizePlan measures a message as proto.Size does and checks its strings
// as measure does, in one walk over the generated struct, for the
// messages whose every field it knows: strings, bytes and most scalars
// without presence, repeated strings, unknown fields, and messages and
// lists of messages whose every field it knows in turn; no maps, oneofs,
// groups or extensions. Those are most of the messages a stream carries
// one after another, where proto.Size alone cost as much as the whole
// hand-over; the rest go through proto.Size. The same plan deep-copies
// such a message (see deepCopy).
type sizePlan struct {
	st      reflect.Type // the generated struct
	shallow *shallowPlan
	fields  []sizeField // all but the unknown fields
	// The unknown fields, which every generated message has, are measured
	// apart from the loop over fields: one kind fewer to switch on a
	// message, which halved the loop's cost for a one-field message.
	unknown    uintptr
	hasUnknown bool
	// walk measures the fields, chosen once for the plan's shape: a
	// message of one string or one list of strings, as most streamed
	// messages are, skips the loop and its switch.
	walk func(p *sizePlan, base addr, depth int) (int, bool, error)
	// copyFields is deepCopy's walk past the top level, chosen likewise.
	copyFields func(p *sizePlan, dst addr)
}

type sizeField struct {
	offset uintptr
	kind   sizeKind
	tag    int  // the size of the field's tag
	utf8   bool // a string that must be UTF-8
	fd     protoreflect.FieldDescriptor
	sub    *sizePlan // for messages and lists of messages
}

type sizeKind uint8

// The kinds of field a sizePlan knows, each sent unless it is zero (a
// float's bits: -0 is sent) or nil. Others (zigzag and fixed integers,
// fields with presence, repeated scalars, which are packed) go through
// proto.Size.
const (
	sizeString      sizeKind = iota // string
	sizeStringList                  // []string, every element sent
	sizeBytes                       // []byte
	sizeBool                        // bool
	sizeInt32                       // int32 and enums, sign-extended
	sizeInt64                       // int64
	sizeUint32                      // uint32
	sizeUint64                      // uint64
	sizeFloat                       // float: 4 bytes
	sizeDouble                      // double: 8 bytes
	sizeMessage                     // *M, sent when not nil
	sizeMessageList                 // []*M
)

// buildSizePlan makes the size plan of st, the generated struct of md, or
// returns nil if st, or a message it holds, has a field the plan does not
// know.
func buildSizePlan(st reflect.Type, md protoreflect.MessageDescriptor) *sizePlan {
	return buildSizePlanIn(st, md, map[reflect.Type]*sizePlan{})
}

// buildSizePlanIn is buildSizePlan with the plans under construction, for
// recursive messages: a plan that fails fails every plan that holds it,
// up to the one asked for.
func buildSizePlanIn(st reflect.Type, md protoreflect.MessageDescriptor, building map[reflect.Type]*sizePlan) *sizePlan {
	if p, ok := building[st]; ok {
		return p
	}
	if md.ExtensionRanges().Len() > 0 || md.Oneofs().Len() > 0 || !isGenerated(st) || !generatedStruct(st, md) || hasLazyFields(st) {
		return nil
	}
	p := &sizePlan{st: st, shallow: shallowPlanFor(st)}
	if p.shallow.moves == nil {
		return nil
	}
	building[st] = p
	for i := range st.NumField() {
		sf := st.Field(i)
		switch {
		case sf.Type == messageStateType || sf.Type.Size() == 0 || isSizeCache(sf):
			continue
		case isUnknownFields(sf):
			p.unknown, p.hasUnknown = sf.Offset, true
			continue
		}
		fd, _ := protoField(sf, md)
		if fd == nil {
			return nil // extensions, weak fields, or what this plan cannot tell
		}
		f := sizeField{offset: sf.Offset, fd: fd, tag: protowire.SizeTag(fd.Number())}
		var ok bool
		if fd.Message() != nil {
			if f.kind, f.sub, ok = messageSizeKind(fd, sf.Type, building); !ok {
				return nil
			}
		} else if f.kind, ok = sizeKindOf(fd, sf.Type); !ok {
			return nil
		}
		f.utf8 = fd.Kind() == protoreflect.StringKind && enforceUTF8(fd)
		p.fields = append(p.fields, f)
	}
	p.walk, p.copyFields = p.walksFor()
	return p
}

// walksFor returns the walks for p's fields, to measure and to copy.
func (p *sizePlan) walksFor() (func(*sizePlan, addr, int) (int, bool, error), func(*sizePlan, addr)) {
	if len(p.fields) == 1 {
		switch p.fields[0].kind {
		case sizeString:
			return (*sizePlan).sizeOneString, (*sizePlan).copyUnknown
		case sizeStringList:
			return (*sizePlan).sizeOneStringList, (*sizePlan).copyOneStringList
		}
	}
	return (*sizePlan).sizeFields, (*sizePlan).copyEachField
}

// messageSizeKind tells how to measure fd, a message field held in a Go
// field of type t (*M or []*M), and returns M's plan.
func messageSizeKind(fd protoreflect.FieldDescriptor, t reflect.Type, building map[reflect.Type]*sizePlan) (sizeKind, *sizePlan, bool) {
	if fd.IsMap() || fd.IsWeak() || fd.Kind() != protoreflect.MessageKind {
		return 0, nil, false // groups and delimited messages are encoded otherwise
	}
	kind := sizeMessage
	if fd.IsList() {
		if t.Kind() != reflect.Slice {
			return 0, nil, false
		}
		kind, t = sizeMessageList, t.Elem()
	}
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return 0, nil, false
	}
	sub := buildSizePlanIn(t.Elem(), fd.Message(), building)
	return kind, sub, sub != nil
}

// sizeKindOf tells how to measure fd, held in a Go field of type t.
func sizeKindOf(fd protoreflect.FieldDescriptor, t reflect.Type) (sizeKind, bool) {
	if fd.IsMap() || fd.IsWeak() || fd.HasPresence() {
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
// protobuf's Marshal gives for a string that is not UTF-8; wire says that
// only the wire encoding carries the message as a socket would (see
// sizeAt), and then n is not known.
func (p *sizePlan) size(base addr) (n int, wire bool, err error) {
	return p.sizeAt(base, 0)
}

// sizeAt is size for a message nested depth levels deep. A nested message
// holding unknown fields, which a socket's receiver would parse, one
// nested deeper than shareDepth, and a nil element of a list, which
// protobuf encodes its own way, need the wire.
func (p *sizePlan) sizeAt(base addr, depth int) (n int, wire bool, err error) {
	return p.walk(p, base, depth)
}

// sizeFields is sizeAt for any plan: a loop over its fields.
func (p *sizePlan) sizeFields(base addr, depth int) (n int, wire bool, err error) {
	fields := p.fields // in registers: p.fields would be loaded a turn
	for i := range fields {
		f := &fields[i]
		switch f.kind {
		case sizeString:
			if s := *field[string](base, f.offset); s != "" {
				if f.utf8 && (len(s) > shortASCIIMax || shortHighBits(s)&asciiHighBits != 0) && !validUTF8(s) {
					return 0, false, errInvalidUTF8
				}
				n += f.tag + protowire.SizeBytes(len(s))
			}
		case sizeStringList:
			ss := *field[[]string](base, f.offset)
			m, bytes := stringsSize(ss)
			// A list of one chunk or less, as most are, goes to the ASCII
			// scan directly; one with a byte past ASCII, or longer, goes
			// the whole way.
			if f.utf8 && (bytes > asciiChunk || asciiPrefix(ss) != len(ss)) && firstInvalidUTF8Of(ss, bytes) >= 0 {
				return 0, false, errInvalidUTF8
			}
			n += m + len(ss)*f.tag
		case sizeBytes:
			if b := *field[[]byte](base, f.offset); len(b) > 0 {
				n += f.tag + protowire.SizeBytes(len(b))
			}
		case sizeBool:
			if *field[bool](base, f.offset) {
				n += f.tag + 1
			}
		case sizeInt32:
			if v := *field[int32](base, f.offset); v != 0 {
				n += f.tag + protowire.SizeVarint(uint64(int64(v)))
			}
		case sizeInt64:
			if v := *field[int64](base, f.offset); v != 0 {
				n += f.tag + protowire.SizeVarint(uint64(v))
			}
		case sizeUint32:
			if v := *field[uint32](base, f.offset); v != 0 {
				n += f.tag + protowire.SizeVarint(uint64(v))
			}
		case sizeUint64:
			if v := *field[uint64](base, f.offset); v != 0 {
				n += f.tag + protowire.SizeVarint(v)
			}
		case sizeFloat:
			if *field[uint32](base, f.offset) != 0 {
				n += f.tag + 4
			}
		case sizeDouble:
			if *field[uint64](base, f.offset) != 0 {
				n += f.tag + 8
			}
		case sizeMessage:
			if sub := *field[addr](base, f.offset); sub != nil {
				m, wire, err := f.sub.nestedSize(sub, depth)
				if wire || err != nil {
					return 0, wire, err
				}
				n += f.tag + protowire.SizeBytes(m)
			}
		case sizeMessageList:
			for _, sub := range *field[[]addr](base, f.offset) {
				if sub == nil {
					return 0, true, nil
				}
				m, wire, err := f.sub.nestedSize(sub, depth)
				if wire || err != nil {
					return 0, wire, err
				}
				n += f.tag + protowire.SizeBytes(m)
			}
		}
	}
	return p.withUnknown(base, depth, n)
}

// sizeOneString is sizeAt for a plan of one string field.
func (p *sizePlan) sizeOneString(base addr, depth int) (int, bool, error) {
	f := &p.fields[0]
	s := *field[string](base, f.offset)
	if s == "" {
		return p.withUnknown(base, depth, 0)
	}
	n, wire, _ := p.withUnknown(base, depth, f.tag+protowire.SizeBytes(len(s)))
	if f.utf8 && (len(s) > shortASCIIMax || shortHighBits(s)&asciiHighBits != 0) && !validUTF8(s) {
		return 0, false, errInvalidUTF8
	}
	return n, wire, nil
}

// sizeOneStringList is sizeAt for a plan of one list of strings. It has
// the size whole before the ASCII scan, so that fewer values live across
// that call, which saves them on the stack.
func (p *sizePlan) sizeOneStringList(base addr, depth int) (int, bool, error) {
	f := &p.fields[0]
	ss := *field[[]string](base, f.offset)
	n, bytes := stringsSize(ss)
	n, wire, _ := p.withUnknown(base, depth, n+len(ss)*f.tag)
	// A list of one chunk or less, as most are, goes to the ASCII scan
	// directly; one with a byte past ASCII, or longer, goes the whole way.
	if f.utf8 && (bytes > asciiChunk || asciiPrefix(ss) != len(ss)) && firstInvalidUTF8Of(ss, bytes) >= 0 {
		return 0, false, errInvalidUTF8
	}
	return n, wire, nil
}

// withUnknown returns n, the size of the fields of the message at base,
// with its unknown fields'. A nested message holding some needs the wire.
func (p *sizePlan) withUnknown(base addr, depth, n int) (int, bool, error) {
	if p.hasUnknown {
		u := len(*field[[]byte](base, p.unknown))
		if u > 0 && depth > 0 {
			return 0, true, nil
		}
		n += u
	}
	return n, false, nil
}

// stringsSize returns the size of the strings of ss with their length
// prefixes, and their length in bytes. A prefix is one byte but for a
// string of 128 bytes or more: the loop adds only those strings' extra
// bytes, which spares most strings an add and a branch.
func stringsSize(ss []string) (n, bytes int) {
	for _, s := range ss {
		l := len(s)
		bytes += l
		if l >= 0x80 {
			n += protowire.SizeVarint(uint64(l)) - 1
		}
	}
	return n + len(ss) + bytes, bytes
}

// nestedSize is sizeAt for a message held by one depth levels deep.
func (p *sizePlan) nestedSize(base addr, depth int) (int, bool, error) {
	if depth >= shareDepth {
		return 0, true, nil
	}
	return p.sizeAt(base, depth+1)
}
