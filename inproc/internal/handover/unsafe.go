package handover

import (
	"reflect"
	"unsafe"
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

// newOf returns a new zero value of the struct type st, as a pointer in
// an interface, and its address.
func newOf(st reflect.Type) (any, addr) {
	v := reflect.New(st)
	return v.Interface(), v.UnsafePointer()
}
