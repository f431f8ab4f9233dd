package handover

import (
	"reflect"
	"unsafe"

	"google.golang.org/protobuf/runtime/protoimpl"

	gproto "google.golang.org/protobuf/proto"
)

// Every operation of this package that goes around Go's type system is in
// this file: reading the words of an interface, and reading and writing
// fields of generated structs at the offsets their plans found (see
// layout.go for what those plans assume of generated code).

// addr is the address of a message or of one of its fields.
type addr = unsafe.Pointer

// A typeWord is the type word of an interface holding a value of some
// type: comparing it is how a message's type is recognised at once.
type typeWord unsafe.Pointer

// wordOf returns the type word of x.
func wordOf(x any) typeWord {
	return typeWord((*[2]unsafe.Pointer)(unsafe.Pointer(&x))[0])
}

// dataWord returns the data word of x: the pointer x holds, when x holds
// one.
func dataWord(x any) addr {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1]
}

// field returns the field of type T at offset off in the struct at base.
func field[T any](base addr, off uintptr) *T {
	return (*T)(unsafe.Add(base, off))
}

// bytesAt returns the []byte field at offset off in the struct at base.
func bytesAt(base addr, off uintptr) []byte {
	return *field[[]byte](base, off)
}

// sameStructs returns the addresses of dst and src, and their struct
// type, if both are non-nil pointers to one struct type.
func sameStructs(dst, src any) (d, s addr, st reflect.Type, ok bool) {
	t := reflect.TypeOf(dst)
	if t != reflect.TypeOf(src) || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, nil, nil, false
	}
	d, s = dataWord(dst), dataWord(src)
	if d == nil || s == nil {
		return nil, nil, nil, false
	}
	return d, s, t.Elem(), true
}

// newAt returns the address of a new zero value of the struct type st.
func newAt(st reflect.Type) addr {
	return reflect.New(st).UnsafePointer()
}

// newOf returns a new zero value of the struct type st, as a pointer in
// an interface, and its address.
func newOf(st reflect.Type) (any, addr) {
	v := reflect.New(st)
	return v.Interface(), v.UnsafePointer()
}

// word is the size of a pointer, the unit of moves.
const word = unsafe.Sizeof(uintptr(0))

// do makes the move from the struct at s to the struct at d, unless it is
// a moveList, which list makes, or a moveString, which copy makes. A pointer is stored as one, with the write
// barrier the compiler puts in.
func (m move) do(d, s addr) {
	d, s = unsafe.Add(d, m.offset), unsafe.Add(s, m.offset)
	switch m.kind {
	case moveClippedSlice:
		v := *(*[]byte)(s) // only the header is read: any element type
		*(*[]byte)(d) = v[:len(v):len(v)]
	case moveOneofBytes:
		if v := *(*[]byte)(s); v != nil {
			*(*[]byte)(d) = v[:len(v):len(v)]
		} else {
			*(*[]byte)(d) = []byte{}
		}
	case moveString:
		*(*string)(d) = *(*string)(s)
	case movePointer:
		*(*unsafe.Pointer)(d) = *(*unsafe.Pointer)(s)
	case move16:
		*(*[2]uint64)(d) = *(*[2]uint64)(s)
	case move8:
		*(*uint64)(d) = *(*uint64)(s)
	case moveSlice:
		*(*[]byte)(d) = *(*[]byte)(s)
	case moveInterface:
		*(*any)(d) = *(*any)(s)
	case move4:
		*(*uint32)(d) = *(*uint32)(s)
	case move2:
		*(*uint16)(d) = *(*uint16)(s)
	default:
		*(*uint8)(d) = *(*uint8)(s)
	}
}

// list is a moveList, which copy makes itself, the most common move:
// clipped, and nil if empty. Nil is not stored over nil, as in a
// receiver's new message, which spares the write barrier's check.
func (m move) list(d, s addr) {
	d, s = unsafe.Add(d, m.offset), unsafe.Add(s, m.offset)
	if v := *(*[]byte)(s); len(v) > 0 {
		*(*[]byte)(d) = v[:len(v):len(v)]
	} else if *(*unsafe.Pointer)(d) != nil {
		*(*[]byte)(d) = nil
	}
}

// valueAt returns the field of type t at offset off in the struct at
// base, settable: reflect.Value.Set refuses unexported fields, such as
// unknownFields, and a Value made by NewAt does not.
func valueAt(t reflect.Type, base addr, off uintptr) reflect.Value {
	return reflect.NewAt(t, unsafe.Add(base, off)).Elem()
}

// messageAt returns the message at base, of the generated type t (a
// pointer to its struct).
func messageAt(t reflect.Type, base addr) gproto.Message {
	return reflect.NewAt(t.Elem(), base).Interface().(gproto.Message)
}

// stringBytes returns s's bytes, to be read, never written.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// oneString returns a slice of the one string at s, which stays on the
// caller's stack where the callee does not keep it (asciiPrefix).
func oneString(s *string) []string {
	return unsafe.Slice(s, 1)
}

// reboxSlice gives the struct at base its own pointer to a copy of the
// slice header its field at off points to (a *[]*M of the opaque API):
// the same elements, a header of its own, clipped as clipSlice clips; or
// nil for an empty list, as a socket gives it. The header is read as a
// []byte, whose first word is a pointer whatever the elements are.
func reboxSlice(base addr, off uintptr) {
	switch box := *field[*[]byte](base, off); {
	case box == nil:
	case len(*box) == 0:
		*field[*[]byte](base, off) = nil
	default:
		own := (*box)[:len(*box):len(*box)]
		*field[*[]byte](base, off) = &own
	}
}

// interfaceIsNil reports whether the interface field at off in the struct
// at base holds nothing (its type word is nil): an unset oneof.
func interfaceIsNil(base addr, off uintptr) bool {
	return *field[addr](base, off) == nil
}

// clipSlice sets the capacity of the slice field at off in the struct at
// base to its length. The header is read as a []byte: only its capacity
// changes, whatever the elements are.
func clipSlice(base addr, off uintptr) {
	s := field[[]byte](base, off)
	*s = (*s)[:len(*s):len(*s)]
}

// reboxScalar gives the field at off in the struct at base, a pointer to a
// scalar of kind k, a box of its own holding the same value. Scalars of
// one size are boxed alike: their bits are copied.
func reboxScalar(base addr, off uintptr, k reflect.Kind) {
	switch k {
	case reflect.String:
		rebox[string](base, off)
	case reflect.Bool:
		rebox[bool](base, off)
	case reflect.Int32, reflect.Uint32, reflect.Float32:
		rebox[uint32](base, off)
	default: // 64 bits
		rebox[uint64](base, off)
	}
}

func rebox[T any](base addr, off uintptr) {
	if p := *field[*T](base, off); p != nil {
		v := *p
		*field[*T](base, off) = &v
	}
}

// interfaceWords returns the two words of the interface field at off in
// the struct at base: what identifies the dynamic type, and the data.
func interfaceWords(base addr, off uintptr) (tab, data addr) {
	w := field[[2]addr](base, off)
	return w[0], w[1]
}

// setInterfaceData sets the data word of the interface field at off in
// the struct at base to p, a value of the type its other word names.
func setInterfaceData(base addr, off uintptr, p addr) {
	field[[2]addr](base, off)[1] = p // with its write barrier
}

// clearInterface sets the interface field at off in the struct at base
// to nil.
func clearInterface(base addr, off uintptr) {
	*field[[2]addr](base, off) = [2]addr{}
}

// extensionsSet reports whether the extension map at off in the struct at
// base holds any extension.
func extensionsSet(base addr, off uintptr) bool {
	return len(*field[protoimpl.ExtensionFields](base, off)) > 0
}
