package inproc

import (
	"bytes"
	"reflect"
	"slices"
	"sync/atomic"
	"unsafe"
)

// A message whose size plan knows every field is deep-copied by its
// plans: its top level, then new backing arrays for its bytes, its lists
// and its unknown fields. Strings are shared, as Go never changes a
// string's bytes. That is proto.Clone for the messages most streams carry,
// at a fraction of its cost, since it takes no reflection per field.

// knownFlat returns the plans last holds if m is of their type and their
// size plan knows every field, and m's address. A type with a generated
// fast clone (vtprotobuf's) is left to it.
func knownFlat(m any, last *atomic.Pointer[typedPlan]) (*typedPlan, unsafe.Pointer) {
	tp := last.Load()
	if tp == nil || !tp.flat {
		return nil, nil
	}
	w := (*[2]unsafe.Pointer)(unsafe.Pointer(&m))
	if w[0] != unsafe.Pointer(tp.word) || w[1] == nil {
		return nil, nil
	}
	return tp, w[1]
}

// cloneKnown returns a deep copy of m, if knownFlat finds its plans.
func cloneKnown(m any, last *atomic.Pointer[typedPlan]) (clone any, ok bool) {
	tp, src := knownFlat(m, last)
	if tp == nil {
		return nil, false
	}
	v := reflect.New(tp.t.Elem())
	tp.deepCopy(v.UnsafePointer(), src)
	return v.Interface(), true
}

// copyKnown makes dst a deep copy of m, if knownFlat finds m's plans and
// dst is of m's type.
func copyKnown(dst, m any, last *atomic.Pointer[typedPlan]) bool {
	tp, src := knownFlat(m, last)
	if tp == nil {
		return false
	}
	d := (*[2]unsafe.Pointer)(unsafe.Pointer(&dst))
	if d[0] != unsafe.Pointer(tp.word) || d[1] == nil {
		return false
	}
	tp.deepCopy(d[1], src)
	return true
}

// deepCopy copies the message at src to the one at dst.
func (tp *typedPlan) deepCopy(dst, src unsafe.Pointer) {
	tp.shallow.copy(dst, src)
	for i := range tp.sizer.fields {
		f := &tp.sizer.fields[i]
		at := unsafe.Add(dst, f.offset)
		switch f.kind {
		case sizeBytes, sizeUnknown:
			if b := *(*[]byte)(at); b != nil {
				*(*[]byte)(at) = bytes.Clone(b)
			}
		case sizeStringList:
			if l := *(*[]string)(at); l != nil {
				*(*[]string)(at) = slices.Clone(l)
			}
		}
	}
}
