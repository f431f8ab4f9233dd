package handover

import (
	"errors"
	"reflect"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// mayNeedInit reports whether a message of md may hold, at any depth, a
// required field: one of its own, or in an extension, which may be set.
func mayNeedInit(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.RequiredNumbers().Len() > 0 || md.ExtensionRanges().Len() > 0 {
		return true
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Message() != nil && mayNeedInit(fd.Message(), seen) {
			return true
		}
	}
	return false
}

// A utf8Plan says where a message type keeps strings that must be UTF-8,
// directly or in messages it holds. A nil plan means none: most checks end
// at once.
type utf8Plan struct {
	typ    reflect.Type // a pointer to the generated struct
	fields []utf8Field
	// extensions: the message has extension ranges, and any extension set
	// may hold strings.
	extensions bool
	// generic: the Go type is not a generated struct this plan can read
	// field by field (a dynamic message, say); walk it through reflection
	// of its descriptor instead.
	generic bool
}

type utf8Field struct {
	offset uintptr // of the Go struct field
	kind   utf8Kind
	fd     protoreflect.FieldDescriptor // nil for a oneof
	oneof  protoreflect.OneofDescriptor // for a oneof
	sub    *utf8Plan                    // for message fields
}

type utf8Kind uint8

const (
	kindString      utf8Kind = iota // string
	kindStringPtr                   // *string (explicit presence)
	kindStringList                  // []string
	kindMessage                     // *M
	kindMessageList                 // []*M
	kindOther                       // maps and oneofs: through protoreflect
)

// utf8Plans holds the UTF-8 plans made; noUTF8Plan stands for nil.
var utf8Plans planCache[*utf8Plan]

var noUTF8Plan = &utf8Plan{}

// utf8PlanFor returns the UTF-8 plan of t, holding md: nil if it holds no
// string to check.
func utf8PlanFor(t reflect.Type, md protoreflect.MessageDescriptor) *utf8Plan {
	key := planKey{t, md}
	p, ok := utf8Plans.load(key)
	if !ok {
		built := buildUTF8Plan(t, md, map[reflect.Type]*utf8Plan{})
		if built == nil {
			built = noUTF8Plan
		}
		p = utf8Plans.store(key, built)
	}
	if p == noUTF8Plan {
		return nil
	}
	return p
}

// buildUTF8Plan makes t's plan; building holds the plans under construction,
// for recursive message types.
func buildUTF8Plan(t reflect.Type, md protoreflect.MessageDescriptor, building map[reflect.Type]*utf8Plan) *utf8Plan {
	if p, ok := building[t]; ok {
		return p
	}
	if !needsUTF8(md, map[protoreflect.FullName]bool{}) {
		return nil
	}
	p := &utf8Plan{typ: t, extensions: md.ExtensionRanges().Len() > 0}
	building[t] = p
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		p.generic = true
		return p
	}
	st := t.Elem()
	if !isGenerated(st) || !generatedStruct(st, md) || hasLazyFields(st) {
		// A legacy message is read through protobuf's reflection of it,
		// as are lazy fields, which generated code loads atomically.
		p.generic = true
		return p
	}
	for i := range st.NumField() {
		sf := st.Field(i)
		if name, ok := oneofOf(sf); ok {
			p.fields = append(p.fields, utf8Field{offset: sf.Offset, kind: kindOther, oneof: md.Oneofs().ByName(protoreflect.Name(name))})
			continue
		}
		fd, tagged := protoField(sf, md)
		if !tagged {
			continue
		}
		if fd == nil {
			p.generic = true
			return p
		}
		f := utf8Field{offset: sf.Offset, fd: fd}
		switch {
		case fd.IsMap():
			if !needsUTF8Field(fd, map[protoreflect.FullName]bool{}) {
				continue
			}
			f.kind = kindOther
		case fd.Kind() == protoreflect.StringKind:
			if !enforceUTF8(fd) {
				continue
			}
			switch {
			case sf.Type.Kind() == reflect.String:
				f.kind = kindString
			case sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.String:
				f.kind = kindStringPtr
			case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.String:
				f.kind = kindStringList
			default:
				p.generic = true
				return p
			}
		case fd.Message() != nil:
			if !needsUTF8(fd.Message(), map[protoreflect.FullName]bool{}) {
				continue
			}
			mt := sf.Type
			if fd.IsList() {
				if mt.Kind() != reflect.Slice {
					p.generic = true
					return p
				}
				mt = mt.Elem()
				f.kind = kindMessageList
			} else {
				f.kind = kindMessage
			}
			if mt.Kind() != reflect.Pointer || mt.Elem().Kind() != reflect.Struct || hasLazyFields(mt.Elem()) {
				// Lazy fields are loaded atomically by generated code: the
				// walk reads them through reflection, which does too.
				p.generic = true
				return p
			}
			if f.sub = buildUTF8Plan(mt, fd.Message(), building); f.sub.generic {
				p.generic = true
				return p
			}
		default:
			continue
		}
		p.fields = append(p.fields, f)
	}
	return p
}

// enforceUTF8 is protobuf-go's rule for which strings Marshal checks.
func enforceUTF8(fd protoreflect.FieldDescriptor) bool {
	if fd.Syntax() == protoreflect.Editions {
		if e, ok := fd.(interface{ EnforceUTF8() bool }); ok {
			return e.EnforceUTF8()
		}
	}
	return fd.Syntax() == protoreflect.Proto3
}

// needsUTF8 reports whether md holds, at any depth, a string that must be
// UTF-8.
func needsUTF8(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.ExtensionRanges().Len() > 0 {
		return true // what extensions hold is known only when they are set
	}
	fields := md.Fields()
	for i := range fields.Len() {
		if needsUTF8Field(fields.Get(i), seen) {
			return true
		}
	}
	return false
}

func needsUTF8Field(fd protoreflect.FieldDescriptor, seen map[protoreflect.FullName]bool) bool {
	if fd.IsMap() {
		return needsUTF8Field(fd.MapKey(), seen) || needsUTF8Field(fd.MapValue(), seen)
	}
	if fd.Kind() == protoreflect.StringKind {
		return enforceUTF8(fd)
	}
	if m := fd.Message(); m != nil {
		return needsUTF8(m, seen)
	}
	return false
}

// check walks the message at base, a generated struct of plan p. It reads
// the fields at the offsets the plan found, as protobuf's own fast paths
// do, so that a message of small strings costs little more than their
// UTF-8 check.
func (p *utf8Plan) check(base addr) error {
	for i := range p.fields {
		f := &p.fields[i]
		switch f.kind {
		case kindString:
			if !validUTF8(*field[string](base, f.offset)) {
				return errInvalidUTF8
			}
		case kindStringPtr:
			if sp := *field[*string](base, f.offset); sp != nil && !validUTF8(*sp) {
				return errInvalidUTF8
			}
		case kindStringList:
			if firstInvalidUTF8(*field[[]string](base, f.offset)) >= 0 {
				return errInvalidUTF8
			}
		case kindMessage:
			if sub := *field[addr](base, f.offset); sub != nil {
				if err := f.sub.check(sub); err != nil {
					return err
				}
			}
		case kindMessageList:
			for _, sub := range *field[[]addr](base, f.offset) {
				if sub != nil {
					if err := f.sub.check(sub); err != nil {
						return err
					}
				}
			}
		case kindOther:
			if err := p.checkOther(base, f); err != nil {
				return err
			}
		}
	}
	if p.extensions {
		return p.checkExtensions(base)
	}
	return nil
}

// checkExtensions checks the extensions set on the message at base.
func (p *utf8Plan) checkExtensions(base addr) error {
	rm := messageAt(p.typ, base).ProtoReflect()
	var err error
	rm.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsExtension() {
			err = checkValue(fd, v)
		}
		return err == nil
	})
	return err
}

// checkOther checks a map or oneof field f of the message at base,
// through reflection.
func (p *utf8Plan) checkOther(base addr, f *utf8Field) error {
	if f.fd == nil && interfaceIsNil(base, f.offset) {
		return nil // an unset oneof: its interface's first word is nil
	}
	rm := messageAt(p.typ, base).ProtoReflect()
	if f.fd != nil { // a map
		return checkValue(f.fd, rm.Get(f.fd))
	}
	if fd := rm.WhichOneof(f.oneof); fd != nil {
		return checkValue(fd, rm.Get(fd))
	}
	return nil
}

// checkReflect checks every field of rm through reflection.
func checkReflect(rm protoreflect.Message) error {
	var err error
	rm.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		err = checkValue(fd, v)
		return err == nil
	})
	return err
}

func checkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch {
	case fd.IsMap():
		var err error
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			if err = checkSingle(fd.MapKey(), k.Value()); err == nil {
				err = checkSingle(fd.MapValue(), mv)
			}
			return err == nil
		})
		return err
	case fd.IsList():
		l := v.List()
		for i := range l.Len() {
			if err := checkSingle(fd, l.Get(i)); err != nil {
				return err
			}
		}
		return nil
	}
	return checkSingle(fd, v)
}

func checkSingle(fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch {
	case fd.Kind() == protoreflect.StringKind:
		if enforceUTF8(fd) && !validUTF8(v.String()) {
			return errInvalidUTF8
		}
	case fd.Message() != nil:
		m := v.Message()
		if !m.IsValid() {
			return nil // a nil message in a map or oneof encodes as empty
		}
		if p := utf8PlanFor(reflect.TypeOf(m.Interface()), fd.Message()); p != nil {
			if !p.generic {
				return p.check(dataWord(m.Interface()))
			}
			return checkReflect(m)
		}
	}
	return nil
}

// errInvalidUTF8 is the error protobuf's Marshal gives for a string that
// is not UTF-8, for the generated and legacy messages checked here: that
// of its fast path, which names no field.
var errInvalidUTF8 = errors.New("string field contains invalid UTF-8")
