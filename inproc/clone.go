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

// cloneKnown returns a deep copy of m, if known finds its plans and they
// are flat. A type with a generated fast clone (vtprotobuf's) is left to
// it.
func cloneKnown(m any, last *atomic.Pointer[typedPlan]) (clone any, ok bool) {
	tp, src := known(m, last)
	if tp == nil || !tp.flat {
		return nil, false
	}
	v := reflect.New(tp.t.Elem())
	tp.deepCopy(v.UnsafePointer(), src)
	return v.Interface(), true
}

// copyKnown makes dst a deep copy of m, if known finds m's plans, they are
// flat, and dst is of m's type.
func copyKnown(dst, m any, last *atomic.Pointer[typedPlan]) bool {
	tp, src := known(m, last)
	if tp == nil || !tp.flat {
		return false
	}
	d := tp.of(dst)
	if d == nil {
		return false
	}
	tp.deepCopy(d, src)
	return true
}

// deepCopy copies the message at src to the one at dst.
func (tp *typedPlan) deepCopy(dst, src unsafe.Pointer) {
	tp.shallow.copy(dst, src)
	for i := range tp.sizer.fields {
		f := &tp.sizer.fields[i]
		at := unsafe.Add(dst, f.offset)
		// An empty field comes out nil, as from proto.Clone or a socket.
		switch f.kind {
		case sizeBytes, sizeUnknown:
			if b := *(*[]byte)(at); len(b) > 0 {
				*(*[]byte)(at) = bytes.Clone(b)
			} else {
				*(*[]byte)(at) = nil
			}
		case sizeStringList:
			if l := *(*[]string)(at); len(l) > 0 {
				*(*[]string)(at) = slices.Clone(l)
			} else {
				*(*[]string)(at) = nil
			}
		}
	}
}
