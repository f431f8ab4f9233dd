package handover

import (
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A shallowPlan copies the top level of a generated message except its
// internal state and its size cache. proto.Size and Marshal store a
// message's size cache atomically, so a plain read of it while another
// goroutine sizes the same message, which is allowed since neither changes
// it, would be a data race; and the receiver's message makes its own state
// when first used.
//
// The copy is a list of word moves made once per type from the fields'
// layout: a word that holds a pointer is stored as a pointer, so the
// compiler puts in the write barrier the garbage collector needs, the
// rest as plain data. It costs a few nanoseconds, where a reflect.Value.Set
// per message cost five times that; a type the list cannot describe (a
// long array, say) is copied field by field through reflection.
type shallowPlan struct {
	// dynamic: the type is a protobuf message that is not a generated
	// struct, such as dynamicpb.Message, whose one Go type holds messages
	// of any descriptor, kept where a top-level copy would not make the
	// receiver's own: it is copied as a message instead (see receiveOther).
	dynamic bool
	moves   []move
	// fields, when moves is nil: the fields copied, each through
	// reflection.
	fields []fieldAt
	// sizeCaches are the offsets of the size caches, which the receiver's
	// message gets cleared, as Unmarshal clears them.
	sizeCaches []uintptr
	// What protobuf writes through a pointer, or into spare capacity, that
	// a top-level copy would share with the sender, the receiver gets its
	// own of (see ownTopLevel):
	//   - slices: lists and bytes, whose capacity it gets clipped, so that
	//     an append reallocates rather than writes into the sender's array;
	//   - boxes: fields that point to a slice (the opaque API's repeated
	//     message fields), of which it gets its own header;
	//   - scalars: fields that point to a scalar (explicit presence), of
	//     which it gets its own box;
	//   - oneofs: interface fields, whose wrapper struct it gets a copy of.
	//   - maps, which it gets a copy of (their entries shared), as it
	//     gets a map of its own from a socket.
	//   (The moves clip slices as they copy them, and give a list, or
	//   bytes without presence, that is empty as nil, and a oneof's nil
	//   bytes as empty, as a socket gives them: slices is for the fields
	//   copied through reflection.)
	slices  []uintptr
	boxes   []uintptr
	scalars []scalarField
	oneofs  []*oneofField
	maps    []fieldAt
	// bytesLists: lists of bytes, whose nil elements a socket delivers
	// as empty (protobuf sends every element): a list holding one is
	// copied with them so.
	bytesLists []uintptr
	ownsTop    bool // any of the six is not empty
	// extensions is the offset of the message's extensions, if any
	// (hasExtensions): a message with some set takes the wire with Share.
	extensions    uintptr
	hasExtensions bool
}

// A scalarField is a field that points to a scalar of kind.
type scalarField struct {
	offset uintptr
	kind   reflect.Kind
}

// A move copies one value at offset: plain data of 1, 2, 4, 8 or 16 bytes,
// one pointer, or a string's, an interface's or a slice's header, whose
// words are moved together (a top-level slice with its capacity clipped:
// see shallowPlan.slices).
type move struct {
	offset uintptr
	kind   moveKind
}

type moveKind uint8

const (
	move1 moveKind = iota
	move2
	move4
	move8
	move16 // two words of plain data
	movePointer
	moveString
	moveInterface
	moveSlice
	moveClippedSlice
	moveList       // clipped, and nil if empty (see emptyIsAbsent)
	moveOneofBytes // clipped, and empty if nil: a oneof's bytes, whose case is set
)

// plainMove is the move of size bytes of plain data.
func plainMove(offset, size uintptr) move {
	switch size {
	case 1:
		return move{offset: offset, kind: move1}
	case 2:
		return move{offset: offset, kind: move2}
	case 4:
		return move{offset: offset, kind: move4}
	case 8:
		return move{offset: offset, kind: move8}
	}
	panic("handover: no move of this size")
}

// maxMoves bounds a plan's length, for types of no bounded shape (a long
// array): past it, fields are copied through reflection. Generated
// messages stay far below it: a field takes one move, or two for a long
// plain one.
const maxMoves = 512

// fieldAt is a field of a struct: where it is and its type.
type fieldAt struct {
	offset uintptr
	typ    reflect.Type
}

var (
	shallowPlans     planCache[*shallowPlan] // by the struct's type alone
	protoMessageType = reflect.TypeFor[gproto.Message]()
	selfCoderType    = reflect.TypeFor[selfCoder]()
)

// shallowPlanFor returns the plan of st, a struct type.
func shallowPlanFor(st reflect.Type) *shallowPlan {
	key := planKey{t: st}
	if p, ok := shallowPlans.load(key); ok {
		return p
	}
	return shallowPlans.store(key, buildShallowPlan(st))
}

func buildShallowPlan(st reflect.Type) *shallowPlan {
	p := &shallowPlan{}
	if reflect.PointerTo(st).Implements(protoMessageType) && !isGenerated(st) {
		p.dynamic = true
		return p
	}
	// protobuf's reflection, which Set, Merge and Unmarshal go through,
	// writes through a field's pointer into a oneof's wrapper or a scalar's
	// box; a self-coding message's own code assigns new ones, as plain Go
	// does, so that only the fields it appends to need clipping.
	selfCoding := reflect.PointerTo(st).Implements(selfCoderType) && !reflect.PointerTo(st).Implements(protoMessageType)
	md := descriptorOf(st)
	moves, ok := []move{}, true
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type == messageStateType {
			continue
		}
		if isReceiversOwn(f) {
			continue
		}
		if isSizeCache(f) {
			p.sizeCaches = append(p.sizeCaches, f.Offset)
			continue
		}
		switch k := f.Type.Kind(); {
		case k == reflect.Slice:
			p.slices = append(p.slices, f.Offset)
		case k == reflect.Interface && !selfCoding:
			p.oneofs = append(p.oneofs, &oneofField{fieldAt: fieldAt{offset: f.Offset, typ: f.Type}})
		case k == reflect.Pointer && f.Type.Elem().Kind() == reflect.Slice:
			p.boxes = append(p.boxes, f.Offset)
		case k == reflect.Pointer && isScalar(f.Type.Elem().Kind()) && !selfCoding:
			p.scalars = append(p.scalars, scalarField{offset: f.Offset, kind: f.Type.Elem().Kind()})
		case k == reflect.Map:
			p.maps = append(p.maps, fieldAt{offset: f.Offset, typ: f.Type})
		}
		if f.Type == bytesListType {
			p.bytesLists = append(p.bytesLists, f.Offset)
		}
		p.fields = append(p.fields, fieldAt{offset: f.Offset, typ: f.Type})
		switch {
		case !ok:
		case isOneofBytes(st):
			moves = append(moves, move{offset: f.Offset, kind: moveOneofBytes})
		case f.Type.Kind() == reflect.Slice && emptyIsAbsent(f, md):
			moves = append(moves, move{offset: f.Offset, kind: moveList})
		case f.Type.Kind() == reflect.Slice:
			moves = append(moves, move{offset: f.Offset, kind: moveClippedSlice})
		default:
			moves, ok = appendMoves(moves, f.Type, f.Offset)
		}
	}
	p.extensions, p.hasExtensions = extensionsField(st)
	if moves = mergePlain(moves); ok && len(moves) <= maxMoves {
		// The moves clip the slices as they copy them.
		p.moves, p.fields, p.slices = moves, nil, nil
	}
	p.ownsTop = len(p.slices)+len(p.boxes)+len(p.scalars)+len(p.oneofs)+len(p.maps)+len(p.bytesLists) > 0
	return p
}

// descriptorOf returns the descriptor of the message st is the struct of,
// or nil if it is none (a oneof's wrapper).
func descriptorOf(st reflect.Type) protoreflect.MessageDescriptor {
	if pm := protoMessage(reflect.New(st).Interface()); pm != nil {
		return pm.ProtoReflect().Descriptor()
	}
	return nil
}

// emptyIsAbsent reports whether the slice field sf, of the message md
// (nil if unknown), is one a socket delivers as nil when it is empty: a
// list, the unknown fields, or bytes without presence, none of which is
// sent empty. Bytes with presence are sent empty, and arrive so.
func emptyIsAbsent(sf reflect.StructField, md protoreflect.MessageDescriptor) bool {
	if sf.Type.Elem().Kind() != reflect.Uint8 || isUnknownFields(sf) {
		return true
	}
	if md == nil {
		return false
	}
	fd, _ := protoField(sf, md)
	return fd != nil && !fd.HasPresence()
}

// mergePlain merges each two 8-byte moves of plain data that follow each
// other into one of 16 bytes.
func mergePlain(moves []move) []move {
	merged := moves[:0]
	for i := 0; i < len(moves); i++ {
		m := moves[i]
		if m.kind == move8 && i+1 < len(moves) && moves[i+1].kind == move8 && moves[i+1].offset == m.offset+8 {
			m.kind = move16
			i++
		}
		merged = append(merged, m)
	}
	return merged
}

// appendMoves appends the moves that copy a value of type t at offset;
// false if t cannot be described so.
func appendMoves(moves []move, t reflect.Type, offset uintptr) ([]move, bool) {
	if len(moves) > maxMoves {
		return nil, false
	}
	if !hasPointers(t) && (t.Size() > 8 || uintptr(t.Align()) < t.Size()) {
		// Plain data, in moves as wide as its alignment allows.
		for n := t.Size(); n > 0; {
			size := min(n, 8, uintptr(t.Align()))
			for size&(size-1) != 0 {
				size &= size - 1 // 7 → 4, 6 → 4, 3 → 2
			}
			moves = append(moves, plainMove(offset, size))
			offset, n = offset+size, n-size
		}
		return moves, len(moves) <= maxMoves
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func:
		return append(moves, move{offset: offset, kind: movePointer}), true
	case reflect.String:
		return append(moves, move{offset: offset, kind: moveString}), true
	case reflect.Slice:
		return append(moves, move{offset: offset, kind: moveSlice}), true
	case reflect.Interface:
		return append(moves, move{offset: offset, kind: moveInterface}), true
	case reflect.Struct:
		ok := true
		for i := 0; ok && i < t.NumField(); i++ {
			moves, ok = appendMoves(moves, t.Field(i).Type, offset+t.Field(i).Offset)
		}
		return moves, ok
	case reflect.Array:
		ok := true
		for i := 0; ok && i < t.Len(); i++ {
			moves, ok = appendMoves(moves, t.Elem(), offset+uintptr(i)*t.Elem().Size())
		}
		return moves, ok
	}
	switch t.Size() {
	case 0:
		return moves, true
	case 1, 2, 4, 8:
		return append(moves, plainMove(offset, t.Size())), true
	}
	return nil, false
}

// hasPointers reports whether a value of type t holds a pointer.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Map, reflect.Chan, reflect.Func, reflect.String, reflect.Slice, reflect.Interface:
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	}
	return false
}

// copy copies what the plan covers from the struct at s to the struct at
// d, both of the plan's type.
func (p *shallowPlan) copy(d, s addr) {
	if p.moves != nil {
		for _, m := range p.moves {
			switch m.kind { // the most common moves, kept inline
			case moveList:
				m.list(d, s)
			case moveString:
				*field[string](d, m.offset) = *field[string](s, m.offset)
			default:
				m.do(d, s)
			}
		}
	} else {
		for _, f := range p.fields {
			// reflect.Value.Set refuses unexported fields, such as
			// unknownFields; a Value made by NewAt does not.
			valueAt(f.typ, d, f.offset).Set(valueAt(f.typ, s, f.offset))
		}
	}
	p.clearSizeCaches(d)
	if p.ownsTop {
		p.ownTopLevel(d)
	}
}

// ownTopLevel gives the receiver's message at d its own of what protobuf
// would write through a pointer, or append to, that its top-level copy
// shares with the sender's (see shallowPlan).
func (p *shallowPlan) ownTopLevel(d addr) {
	for _, off := range p.slices {
		clipSlice(d, off)
	}
	for _, off := range p.boxes {
		reboxSlice(d, off)
	}
	for _, f := range p.scalars {
		reboxScalar(d, f.offset, f.kind)
	}
	for _, f := range p.oneofs {
		ownWrapper(d, f)
	}
	for _, f := range p.maps {
		ownMap(d, f)
	}
	for _, off := range p.bytesLists {
		emptyNilElements(field[[][]byte](d, off))
	}
}

// ownMap gives the message at d a copy of the map field f, or nil if it
// is empty, as a socket delivers it: the copy's keys and values are the
// sender's (messages among them are shared, as nested messages are),
// bytes values clipped to their length, a nil one empty (protobuf sends
// every entry's value).
func ownMap(d addr, f fieldAt) {
	v := valueAt(f.typ, d, f.offset)
	if v.Len() == 0 {
		v.SetZero()
		return
	}
	own := reflect.MakeMapWithSize(f.typ, v.Len())
	bytesValues := f.typ.Elem() == bytesType
	for it := v.MapRange(); it.Next(); {
		val := it.Value()
		if bytesValues {
			b := val.Bytes()
			if b == nil {
				b = []byte{}
			}
			val = reflect.ValueOf(b[:len(b):len(b)])
		}
		own.SetMapIndex(it.Key(), val)
	}
	v.Set(own)
}

// emptyNilElements gives *l, a list of bytes that holds a nil element, a
// copy of its own in which those are empty.
func emptyNilElements(l *[][]byte) {
	for i, b := range *l {
		if b == nil {
			own := slices.Clone(*l)
			for j := i; j < len(own); j++ {
				if own[j] == nil {
					own[j] = []byte{}
				}
			}
			*l = own
			return
		}
	}
}

var (
	bytesType     = reflect.TypeFor[[]byte]()
	bytesListType = reflect.TypeFor[[][]byte]()
)

// isScalar reports whether a value of kind k is a scalar protobuf field
// (enums are int32s).
func isScalar(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// A oneofField is an interface field (a oneof) of a struct, and the plan
// of the wrapper it held last, which the next message most likely holds
// too.
type oneofField struct {
	fieldAt
	last atomic.Pointer[wrapperPlan]
}

// A wrapperPlan copies a oneof's wrapper struct, of type st, which the
// word tab identifies in an interface of the oneof's type; a nil plan:
// the value is not a pointer to a struct, and stays shared.
type wrapperPlan struct {
	tab  addr
	st   reflect.Type
	plan *shallowPlan
}

// wrappers holds every wrapper plan made, by tab, for oneofs whose case
// changes from one message to the next.
var wrappers sync.Map // addr → *wrapperPlan

// wrapperPlanFor returns the plan of the wrapper the oneof field f of the
// message at d holds, whose interface's first word is tab.
func wrapperPlanFor(d addr, f *oneofField, tab addr) *wrapperPlan {
	if wp, ok := wrappers.Load(tab); ok {
		return wp.(*wrapperPlan)
	}
	wp := &wrapperPlan{tab: tab}
	if t := valueAt(f.typ, d, f.offset).Elem().Type(); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		wp.st, wp.plan = t.Elem(), shallowPlanFor(t.Elem())
	}
	got, _ := wrappers.LoadOrStore(tab, wp)
	return got.(*wrapperPlan)
}

// ownWrapper gives the message at d its own copy of the wrapper struct the
// oneof field f holds, if set.
func ownWrapper(d addr, f *oneofField) {
	tab, data := interfaceWords(d, f.offset)
	switch {
	case tab == nil:
		return
	case data == nil:
		// A typed nil wrapper: protobuf sends nothing for it, and the
		// receiver's generated getters would dereference it.
		clearInterface(d, f.offset)
		return
	}
	wp := f.last.Load()
	if wp == nil || wp.tab != tab {
		wp = wrapperPlanFor(d, f, tab)
		f.last.Store(wp)
	}
	if wp.plan == nil {
		return
	}
	own := newAt(wp.st)
	wp.plan.copy(own, data)
	setInterfaceData(d, f.offset, own)
}

// clearSizeCaches clears the size caches of the receiver's message at d,
// which may hold the size of a message it received before.
func (p *shallowPlan) clearSizeCaches(d addr) {
	for _, off := range p.sizeCaches {
		*field[int32](d, off) = 0
	}
}
