package inproc

import (
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/runtime/protoimpl"
)

// A shallowPlan copies the top level of a generated message except its
// internal state and its size cache. proto.Size and Marshal store a
// message's size cache atomically, so a plain read of it while another
// goroutine sizes the same message, which is allowed since neither changes
// it, would be a data race; and the receiver's message makes its own state
// when first used.
type shallowPlan struct {
	// The fields copied, when they are contiguous: a struct type laid out
	// as they are, copied in one typed move at offset.
	region typeWord
	offset uintptr
	// Otherwise the fields copied, each by its own typed move.
	fields []fieldAt
	// sizeCaches are the offsets of the size caches, which the receiver's
	// message gets cleared, as Unmarshal clears them.
	sizeCaches []uintptr
}

// fieldAt is a field of a struct: where it is and its type.
type fieldAt struct {
	offset uintptr
	typ    typeWord
}

// A typeWord is the type word of an interface holding a pointer to some
// type: with it, valueAt makes a reflect.Value of that pointer type for an
// address without reflect.NewAt, which looks the pointer type up in a map
// on every call (for a type made by StructOf) and, deep in its stack,
// grows the small stack of a handler's new goroutine.
type typeWord unsafe.Pointer

// pointerTypeWord returns the type word of *t.
func pointerTypeWord(t reflect.Type) typeWord {
	x := reflect.New(t).Interface()
	return typeWord((*[2]unsafe.Pointer)(unsafe.Pointer(&x))[0])
}

// valueAt returns the value of type t at p, where tw is *t's type word: an
// interface of dynamic type *t holding p, as reflect.NewAt(t, p).Elem()
// gives, built by hand. The interface lives on the stack, so writing its
// words needs no write barrier.
func valueAt(tw typeWord, p unsafe.Pointer) reflect.Value {
	var x any
	w := (*[2]unsafe.Pointer)(unsafe.Pointer(&x))
	w[0], w[1] = unsafe.Pointer(tw), p
	return reflect.ValueOf(x).Elem()
}

var (
	shallowPlans     sync.Map // reflect.Type of the struct → *shallowPlan
	messageStateType = reflect.TypeFor[protoimpl.MessageState]()
)

// shallowPlanFor returns the plan of st, a struct type.
func shallowPlanFor(st reflect.Type) *shallowPlan {
	if p, ok := shallowPlans.Load(st); ok {
		return p.(*shallowPlan)
	}
	p := buildShallowPlan(st)
	shallowPlans.Store(st, p)
	return p
}

func buildShallowPlan(st reflect.Type) *shallowPlan {
	var keep []int
	p := &shallowPlan{}
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type == messageStateType {
			continue
		}
		if f.Name == "sizeCache" || f.Name == "XXX_sizecache" {
			if f.Type.Kind() == reflect.Int32 {
				p.sizeCaches = append(p.sizeCaches, f.Offset)
			}
			continue
		}
		keep = append(keep, i)
		p.fields = append(p.fields, fieldAt{offset: f.Offset, typ: pointerTypeWord(f.Type)})
	}
	if len(keep) == 0 {
		return p
	}
	for j := 1; j < len(keep); j++ {
		if keep[j] != keep[j-1]+1 {
			return p // not contiguous
		}
	}
	// A struct of the same field types in the same order has the same
	// layout, offsets relative to the first; StructOf wants exported names.
	fields := make([]reflect.StructField, len(keep))
	for j, i := range keep {
		fields[j] = reflect.StructField{Name: "F" + strconv.Itoa(j), Type: st.Field(i).Type}
	}
	region := reflect.StructOf(fields)
	base := st.Field(keep[0]).Offset
	for j, i := range keep {
		if region.Field(j).Offset != st.Field(i).Offset-base {
			return p
		}
	}
	// The move must end before the first field it leaves out: StructOf pads
	// a struct whose last field has size zero, where the original has the
	// next field (a size cache, say) at that same offset.
	limit := st.Size()
	if last := keep[len(keep)-1]; last+1 < st.NumField() {
		limit = st.Field(last + 1).Offset
	}
	if base+region.Size() > limit {
		return p
	}
	p.region, p.offset = pointerTypeWord(region), base
	return p
}

// copy copies what the plan covers from the struct at s to the struct at
// d, both of the plan's type, with the write barriers the garbage
// collector needs. (reflect.Value.Set refuses unexported fields, such as
// unknownFields; a Value made by NewAt does not.)
func (p *shallowPlan) copy(d, s unsafe.Pointer) {
	if p.region != nil {
		moveAt(p.region, d, s, p.offset)
	} else {
		for _, f := range p.fields {
			moveAt(f.typ, d, s, f.offset)
		}
	}
	p.clearSizeCaches(d)
}

// clearSizeCaches clears the size caches of the receiver's message at d,
// which may hold the size of a message it received before.
func (p *shallowPlan) clearSizeCaches(d unsafe.Pointer) {
	for _, off := range p.sizeCaches {
		*(*int32)(unsafe.Add(d, off)) = 0
	}
}

// moveAt copies the value at offset, whose pointer type's word is tw, from
// the struct at src to the struct at dst.
func moveAt(tw typeWord, dst, src unsafe.Pointer, offset uintptr) {
	valueAt(tw, unsafe.Add(dst, offset)).Set(valueAt(tw, unsafe.Add(src, offset)))
}
