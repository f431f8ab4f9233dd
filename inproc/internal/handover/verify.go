package handover

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The plans read a generated struct at offsets they find by what
// layout.go assumes of generated code. layout_test.go pins those
// assumptions against the protobuf-go this module builds with; a program
// may link another. verifyLayout checks them once per type, where the
// program runs: a type the plans misread crosses by its wire encoding,
// which is slower and never wrong.

// layoutDepth is how deep verifyLayout nests messages in the message it
// fills: deep enough that the plans of the messages a type holds are
// read too.
const layoutDepth = 2

// layoutPlans are the plans of one generated struct that read it at
// offsets: the size plan is nil where it does not know every field.
type layoutPlans struct {
	utf8    *utf8Plan
	size    *sizePlan
	shallow *shallowPlan
}

// verifyLayout reports whether the plans of st, the generated struct of
// md, read a message of st as protobuf-go does: size, the size plan the
// strategy will use (nil if there is none), and the UTF-8 and shallow
// plans, which are kept by type.
// It runs once per type, when the type's strategy is made.
// A panic in the check, from an offset that points elsewhere, counts as a
// disagreement.
func verifyLayout(st reflect.Type, md protoreflect.MessageDescriptor, size *sizePlan) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	plans := layoutPlans{
		utf8:    utf8PlanFor(reflect.PointerTo(st), md),
		size:    size,
		shallow: shallowPlanFor(st),
	}
	return checkLayout(st, md, plans) == nil
}

// checkLayout returns the first disagreement between plans and
// protobuf-go on messages of st that have every field set.
// It fills one message per member of st's largest oneof, so that each
// oneof wrapper is copied once.
func checkLayout(st reflect.Type, md protoreflect.MessageDescriptor, plans layoutPlans) error {
	if len(plans.shallow.sizeCaches) != 1 {
		// Copied as data, a size cache races with a Marshal of the
		// sender's message, which stores it atomically.
		return fmt.Errorf("%v: %d size caches found, want 1", md.FullName(), len(plans.shallow.sizeCaches))
	}
	rounds := 1
	for i := range md.Oneofs().Len() {
		rounds = max(rounds, md.Oneofs().Get(i).Fields().Len())
	}
	for round := range rounds {
		pm := reflect.New(st).Interface().(gproto.Message)
		fillLayout(pm.ProtoReflect(), 0, round)
		// Only the top level holds unknown fields: the size plan sends a
		// message with nested ones by the wire, and checks nothing more.
		pm.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 1999, protowire.VarintType), 7))
		if err := checkFilled(pm, st, md, plans); err != nil {
			return fmt.Errorf("%v, message %d: %w", md.FullName(), round, err)
		}
		if round > 0 {
			continue
		}
		if err := checkPlanted(pm, plans); err != nil {
			return fmt.Errorf("%v: %w", md.FullName(), err)
		}
	}
	return checkExtensions(st, md, plans.shallow)
}

// checkFilled checks what the plans compute of pm, a filled message of st:
//   - its unknown fields, where protobuf-go set them;
//   - its size, by the size plan;
//   - a shallow copy by the shallow plan, and a deep copy by the size
//     plan, equal to pm;
//   - the deep copy's bytes, lists and messages, its own.
func checkFilled(pm gproto.Message, st reflect.Type, md protoreflect.MessageDescriptor, plans layoutPlans) error {
	at := dataWord(pm)
	off, ok := unknownField(st)
	if !ok || !bytes.Equal(bytesAt(at, off), pm.ProtoReflect().GetUnknown()) {
		return errors.New("unknown fields not found where protobuf-go keeps them")
	}
	shallow := newAt(st)
	plans.shallow.copy(shallow, at)
	if !gproto.Equal(messageAt(reflect.PointerTo(st), shallow), pm) {
		return errors.New("the shallow plan's copy differs")
	}
	if plans.size == nil {
		return nil
	}
	if n, wire, err := plans.size.size(at); wire || err != nil || n != gproto.Size(pm) {
		return fmt.Errorf("the size plan measures %d (wire %v, %v), proto.Size %d", n, wire, err, gproto.Size(pm))
	}
	deep := newAt(st)
	plans.size.deepCopy(deep, at)
	if !gproto.Equal(messageAt(reflect.PointerTo(st), deep), pm) {
		return errors.New("the size plan's deep copy differs")
	}
	if path := sharedPath(reflect.NewAt(st, at).Elem(), reflect.NewAt(st, deep).Elem()); path != "" {
		return fmt.Errorf("the size plan's deep copy shares %s", path)
	}
	return nil
}

// checkPlanted plants a string that is not UTF-8 in each string field of pm,
// one at a time, and checks that the plans refuse it where protobuf-go's
// Marshal does, and only there.
func checkPlanted(pm gproto.Message, plans layoutPlans) error {
	at := dataWord(pm)
	refusals := func() (utf8, size bool) {
		if plans.utf8 != nil && !plans.utf8.generic {
			utf8 = plans.utf8.check(at) != nil
		}
		if plans.size != nil {
			_, wire, err := plans.size.size(at)
			size = wire || err != nil
		}
		return utf8, size
	}
	if utf8, size := refusals(); utf8 || size {
		return fmt.Errorf("valid strings refused (UTF-8 plan %v, size plan %v)", utf8, size)
	}
	return eachString(pm.ProtoReflect(), func(fd protoreflect.FieldDescriptor) error {
		_, err := gproto.MarshalOptions{AllowPartial: true}.Marshal(pm)
		want := err != nil
		utf8, size := refusals()
		switch {
		case plans.utf8 == nil && want:
			return fmt.Errorf("%v not UTF-8: Marshal refuses it, and no UTF-8 plan was made", fd.FullName())
		case plans.utf8 != nil && !plans.utf8.generic && utf8 != want, plans.size != nil && size != want:
			return fmt.Errorf("%v not UTF-8: Marshal refuses it %v, UTF-8 plan %v, size plan %v", fd.FullName(), want, utf8, size)
		}
		return nil
	})
}

// checkExtensions checks that the shallow plan of st, a message of md,
// finds the extensions set on it.
func checkExtensions(st reflect.Type, md protoreflect.MessageDescriptor, shallow *shallowPlan) error {
	if md.ExtensionRanges().Len() == 0 {
		return nil
	}
	if !shallow.hasExtensions {
		return fmt.Errorf("%v: no extensions field found", md.FullName())
	}
	pm := reflect.New(st).Interface().(gproto.Message)
	if extensionsSet(dataWord(pm), shallow.extensions) {
		return fmt.Errorf("%v: extensions found set on an empty message", md.FullName())
	}
	var xt protoreflect.ExtensionType
	protoregistry.GlobalTypes.RangeExtensionsByMessage(md.FullName(), func(t protoreflect.ExtensionType) bool {
		if xd := t.TypeDescriptor(); !xd.IsList() && xd.Message() == nil {
			xt = t
		}
		return xt == nil
	})
	if xt == nil {
		return nil // none linked in, so none can be set
	}
	pm.ProtoReflect().Set(xt.TypeDescriptor(), layoutScalar(xt.TypeDescriptor(), 0))
	if !extensionsSet(dataWord(pm), shallow.extensions) {
		return fmt.Errorf("%v: extension %v set, not found", md.FullName(), xt.TypeDescriptor().FullName())
	}
	return nil
}

// fillLayout sets every field of m: lists of two, maps of one entry, the
// member round of each oneof, messages down to layoutDepth.
func fillLayout(m protoreflect.Message, depth, round int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && od.Fields().Get(round%od.Fields().Len()) != fd {
			continue
		}
		msg := fd.Message() != nil
		if fd.IsMap() {
			msg = fd.MapValue().Message() != nil
		}
		if fd.IsWeak() || msg && depth >= layoutDepth {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			var v protoreflect.Value
			if msg {
				v = mp.NewValue()
				fillLayout(v.Message(), depth+1, round)
			} else {
				v = layoutScalar(fd.MapValue(), 0)
			}
			mp.Set(layoutScalar(fd.MapKey(), 0).MapKey(), v)
		case fd.IsList():
			l := m.Mutable(fd).List()
			for j := range 2 {
				var v protoreflect.Value
				if msg {
					v = l.NewElement()
					fillLayout(v.Message(), depth+1, round)
				} else {
					v = layoutScalar(fd, j)
				}
				l.Append(v)
			}
		case msg:
			v := m.NewField(fd)
			fillLayout(v.Message(), depth+1, round)
			m.Set(fd, v)
		default:
			m.Set(fd, layoutScalar(fd, 0))
		}
	}
}

// layoutScalar returns a value of fd, the j-th of a list, that is not its
// zero. Its encoded size changes from field to field, so that a plan that
// reads one field at another's offset measures another size.
func layoutScalar(fd protoreflect.FieldDescriptor, j int) protoreflect.Value {
	n := int64(fd.Number()) + int64(j)
	v := int64(1) << (7 * (n % 5)) // a varint of 1 to 5 bytes
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		return protoreflect.ValueOfEnum(values.Get(values.Len() - 1).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if n%2 == 0 {
			v = -v // sign-extended to 10 bytes
		}
		return protoreflect.ValueOfInt32(int32(v))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(v << 21)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(v))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(v) << 21)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(n) + 0.5)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(n) + 0.25)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(strings.Repeat("é", int(n%5)+1))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(bytes.Repeat([]byte("b"), int(n%5)+1))
	}
	panic("handover: no value of kind " + fd.Kind().String())
}

// notUTF8 is the string eachString plants.
const notUTF8 = "a\xffb"

// eachString sets each string field of m that is set, at any depth, and
// each string member of its oneofs, to notUTF8 in turn, calls try, and
// sets it back. Lists and maps have their first element and key set.
func eachString(m protoreflect.Message, try func(protoreflect.FieldDescriptor) error) error {
	bad := protoreflect.ValueOfString(notUTF8)
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) && (fd.Kind() != protoreflect.StringKind || fd.ContainingOneof() == nil) {
			continue
		}
		var err error
		switch {
		case fd.IsMap():
			err = eachMapString(m.Get(fd).Map(), fd, try)
		case fd.IsList():
			l := m.Get(fd).List()
			if fd.Kind() == protoreflect.StringKind {
				old := l.Get(0)
				l.Set(0, bad)
				err = try(fd)
				l.Set(0, old)
			} else if fd.Message() != nil {
				err = eachString(l.Get(0).Message(), try)
			}
		case fd.Kind() == protoreflect.StringKind:
			err = trySet(m, fd, bad, try)
		case fd.Message() != nil:
			err = eachString(m.Get(fd).Message(), try)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// trySet sets fd of m to v, calls try, and sets back fd, or the member of
// fd's oneof that was set.
func trySet(m protoreflect.Message, fd protoreflect.FieldDescriptor, v protoreflect.Value, try func(protoreflect.FieldDescriptor) error) error {
	was := fd
	if od := fd.ContainingOneof(); od != nil {
		was = m.WhichOneof(od)
	}
	var old protoreflect.Value
	if was != nil {
		old = m.Get(was)
	}
	m.Set(fd, v)
	err := try(fd)
	if was != nil {
		m.Set(was, old)
	} else {
		m.Clear(fd)
	}
	return err
}

// eachMapString is eachString for the map field fd.
func eachMapString(mp protoreflect.Map, fd protoreflect.FieldDescriptor, try func(protoreflect.FieldDescriptor) error) error {
	var k protoreflect.MapKey
	mp.Range(func(key protoreflect.MapKey, _ protoreflect.Value) bool {
		k = key
		return false
	})
	if !k.IsValid() {
		return nil
	}
	old := mp.Get(k)
	if fd.MapKey().Kind() == protoreflect.StringKind {
		badKey := protoreflect.ValueOfString(notUTF8).MapKey()
		mp.Set(badKey, old)
		err := try(fd.MapKey())
		mp.Clear(badKey)
		if err != nil {
			return err
		}
	}
	switch {
	case fd.MapValue().Kind() == protoreflect.StringKind:
		mp.Set(k, protoreflect.ValueOfString(notUTF8))
		err := try(fd.MapValue())
		mp.Set(k, old)
		return err
	case fd.MapValue().Message() != nil:
		return eachString(old.Message(), try)
	}
	return nil
}

// sharedPath names what the generated structs a and b, a message and its
// deep copy, share at any depth: a non-empty slice's array or a nested
// message; "" if nothing. It finds the fields by reflection, not by the
// plans' offsets, which it checks.
func sharedPath(a, b reflect.Value) string {
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		name := a.Type().Field(i).Name
		switch fa.Kind() {
		case reflect.Slice:
			if fa.Len() > 0 && fb.Len() > 0 && fa.UnsafePointer() == fb.UnsafePointer() {
				return name
			}
			if isMessagePointer(fa.Type().Elem()) {
				for j := range min(fa.Len(), fb.Len()) {
					if path := sharedMessage(fa.Index(j), fb.Index(j)); path != "" {
						return fmt.Sprintf("%s[%d]%s", name, j, path)
					}
				}
			}
		case reflect.Pointer:
			if isMessagePointer(fa.Type()) {
				if path := sharedMessage(fa, fb); path != "" {
					return name + path
				}
			}
		}
	}
	return ""
}

// sharedMessage is sharedPath for the message pointers a and b.
func sharedMessage(a, b reflect.Value) string {
	switch {
	case a.IsNil() || b.IsNil():
		return ""
	case a.UnsafePointer() == b.UnsafePointer():
		return " (the message)"
	}
	if path := sharedPath(a.Elem(), b.Elem()); path != "" {
		return "." + path
	}
	return ""
}

// isMessagePointer reports whether t points to a generated struct.
func isMessagePointer(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && isGenerated(t.Elem())
}
