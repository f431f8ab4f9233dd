package handover

import (
	"reflect"
	"sync"
	"sync/atomic"

	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A typedPlan is the strategy for one Go type holding one message: how
// grpc-go's proto codec would treat a message of that type, and so how it
// crosses here. It is chosen once, when the type is first sent, and kept
// in the Slot of the method that sent it, where the next message of the
// type finds it by its interface's type word.
//
// The strategies:
//   - planned: a message protoc-gen-go generated (open or hybrid API, with
//     or without vtprotobuf's fast paths), or a legacy one protobuf-go
//     wraps by reflection. It is checked and measured by plans made from
//     its struct, shared with Share, and copied with Clone by the plans
//     when they know every field (flat), by vtprotobuf's CloneMessageVT
//     when it has one, and through its wire encoding otherwise, which is
//     the only copy that keeps every value as a socket does (proto.Clone
//     drops a -0 and leaves unknown fields unparsed).
//   - selfCoding: a legacy message that brings its own Marshal, Unmarshal
//     and Size, as gogoproto's do, and that grpc-go's codec encodes with
//     its own Marshal, which checks no UTF-8. Share measures it by its
//     Size; Clone encodes it once and decodes it once.
//   - viaWire: what only the wire encoding copies as grpc-go would:
//     dynamic messages (one Go type for every message, fields in maps),
//     generated messages with lazy fields, which generated getters
//     decode atomically while the message is read, and legacy messages
//     that have, or hold one that has, a Marshal or an Unmarshal of
//     their own without being a selfCoder (see codesItselfWithin).
//
// A message whose unknown fields are not empty goes through its wire
// encoding whatever its strategy, so that its receiver parses them as a
// socket's would.
type typedPlan struct {
	t       reflect.Type
	md      protoreflect.MessageDescriptor
	how     strategy
	plan    *utf8Plan
	sizer   *sizePlan // nil unless it knows every field
	shallow *shallowPlan
	word    typeWord // t's, as the type word of an interface
	pointer bool     // t is a pointer: the data word of an interface is the message
	// byType: t holds md and no other, so that a message of t is known by
	// its type word alone (one Go type holds every dynamic message).
	byType bool
	// initCheck: the message may hold required fields, so that
	// CheckInitialized must look.
	initCheck bool
	// flat: the size plan knows every field, at every depth, so that a
	// deep copy can go by the plans (see deepCopy), even where t has a
	// generated fast clone: the plans copy as a socket delivers (an empty
	// bytes field comes out nil), where CloneVT keeps it as it was.
	flat bool
	// spares: copies a receiver has taken its top level from (see
	// Release), for clone to copy the next message into.
	spares sync.Pool
	// fast: t has vtprotobuf's CloneMessageVT, used where the plans do not
	// know every field.
	fast bool
	// unknown: where t keeps its unknown fields, if anywhere (hasUnknown).
	unknown    uintptr
	hasUnknown bool
	// nested: a message of t may hold messages that the size plan does not
	// look into, which Share and a fast clone must (see nestedNeedsWire).
	nested bool
	// shareCopies: Share copies a message of t as Clone does, since a top
	// level of its own would still share what a receiver may change (a
	// self-coding message's extensions).
	shareCopies bool
}

// A strategy is how a message of one Go type crosses.
type strategy uint8

const (
	planned strategy = iota
	selfCoding
	viaWire
)

// fastCloner is what vtprotobuf generates: a clone without reflection.
type fastCloner interface {
	CloneMessageVT() gproto.Message
}

// strategyOf returns the strategy of m, kept in last from now on, and m's
// address; nil if m is not a protobuf message, which goes through the
// codec.
func strategyOf(m any, last *atomic.Pointer[typedPlan]) (*typedPlan, addr) {
	pm := protoMessage(m)
	if pm == nil {
		return nil, nil
	}
	t, md := reflect.TypeOf(m), pm.ProtoReflect().Descriptor()
	tp := last.Load()
	if tp == nil || tp.t != t || tp.md != md {
		tp = typedPlanFor(m, t, md)
		last.Store(tp)
	}
	if !tp.pointer {
		return tp, nil
	}
	return tp, dataWord(m)
}

// known returns the strategy last holds if x is a non-nil message of its
// Go type, and x's address: found by the type word of x's interface, so
// that the messages of the one type most calls and streams send take no
// reflection, no lookup and no interface conversion.
func known(x any, last *atomic.Pointer[typedPlan]) (*typedPlan, addr) {
	tp := last.Load()
	if tp == nil || !tp.byType {
		return nil, nil
	}
	if at := tp.of(x); at != nil {
		return tp, at
	}
	return nil, nil
}

// of returns x's address if x is a non-nil message of tp's Go type, nil
// otherwise. A second message is matched against the strategy found for
// the first with it, not by loading it again: another goroutine may have
// stored another type's in between.
func (tp *typedPlan) of(x any) addr {
	if wordOf(x) != tp.word {
		return nil
	}
	return dataWord(x)
}

// measureAt is measure for m, a message of tp's type at at.
func (tp *typedPlan) measureAt(m any, at addr) (int, bool, error) {
	var pm gproto.Message
	if tp.initCheck || tp.sizer == nil {
		pm = protoMessage(m)
	}
	return tp.measure(pm, at)
}

// typedPlans holds the strategies made: a method whose messages change
// type (a generated type and a dynamic one, say) finds each one's again
// instead of making it anew.
var typedPlans planCache

// typedPlanFor returns the strategy of m, of Go type t, holding md.
func typedPlanFor(m any, t reflect.Type, md protoreflect.MessageDescriptor) *typedPlan {
	key := planKey{t, md}
	if tp, ok := typedPlans.load(key); ok {
		return tp.(*typedPlan)
	}
	return typedPlans.store(key, newTypedPlan(m, t, md)).(*typedPlan)
}

func newTypedPlan(m any, t reflect.Type, md protoreflect.MessageDescriptor) *typedPlan {
	tp := &typedPlan{t: t, md: md, plan: planFor(t, md), pointer: t.Kind() == reflect.Pointer, initCheck: true, how: viaWire, word: wordOf(m)}
	if !tp.pointer || t.Elem().Kind() != reflect.Struct {
		return tp
	}
	st := t.Elem()
	_, v2 := m.(gproto.Message)
	_, self := m.(selfCoder)
	switch {
	case isGenerated(st) && generatedStruct(st, md):
		if hasLazyFields(st) || !verifyLayout(st, md) {
			tp.byType = true
			return tp
		}
		tp.how = planned
		tp.sizer = buildSizePlan(st, md)
	case !v2 && self:
		tp.how = selfCoding
		tp.shareCopies = hasLegacyExtensions(st)
	case !v2 && codesItselfWithin(t, map[reflect.Type]bool{}):
		// A Marshal or Unmarshal of its own, or of a message it holds,
		// without the rest of a selfCoder's methods at the top: protobuf
		// encodes and decodes by those, whose errors are the call's and
		// which check no UTF-8, and it crosses as it encodes.
		tp.byType = true
		return tp
	case !v2:
		tp.how = planned // a legacy message, wrapped by reflection
		tp.shareCopies = hasLegacyExtensions(st)
	default:
		return tp // dynamic
	}
	tp.byType = true
	tp.initCheck = mayNeedInit(md, map[protoreflect.FullName]bool{})
	tp.shallow = shallowPlanFor(st)
	tp.unknown, tp.hasUnknown = unknownField(st)
	_, tp.fast = m.(fastCloner)
	tp.flat = tp.sizer != nil
	tp.nested = tp.how == planned && tp.sizer == nil && hasNested(md)
	return tp
}

// hasNoUnknown reports whether the message at at holds no unknown fields.
func (tp *typedPlan) hasNoUnknown(at addr) bool {
	return !tp.hasUnknown || len(bytesAt(at, tp.unknown)) == 0
}

// measure checks the message at base, pm, and returns its size, or wire
// if only its wire encoding carries it as a socket would (see sizeAt);
// pm may be nil when the plan needs neither CheckInitialized nor
// proto.Size.
func (tp *typedPlan) measure(pm gproto.Message, base addr) (n int, wire bool, err error) {
	// protobuf's Marshal finds a string that is not UTF-8 as it encodes,
	// and an unset required field after: in that order.
	switch {
	case tp.sizer != nil:
		if n, wire, err = tp.sizer.size(base); err != nil || wire {
			return 0, wire, err
		}
	case tp.plan != nil && tp.plan.generic:
		err = checkReflect(pm.ProtoReflect())
	case tp.plan != nil:
		err = tp.plan.check(base)
	}
	if err != nil {
		return 0, false, err
	}
	if tp.initCheck {
		if err := gproto.CheckInitialized(pm); err != nil {
			return 0, false, err
		}
	}
	if tp.sizer == nil {
		n = gproto.Size(pm)
	}
	return n, false, nil
}

// send is Send for m, a message of tp's type at at. into, when not nil,
// is the receiver's message, of tp's type: a copy the plans make goes
// there, and send returns delivered.
func (tp *typedPlan) send(m any, at addr, mode Mode, dir Direction, into addr) (any, int, error) {
	if tp.pointer && at == nil { // a typed nil encodes as an empty message
		if err := gproto.CheckInitialized(protoMessage(m)); err != nil {
			return nil, 0, marshalError(err)
		}
		return &wire{}, 0, nil
	}
	if mode == Share && tp.shareCopies {
		mode = Clone
	}
	switch {
	case tp.how == viaWire || !tp.hasNoUnknown(at):
		return sendWire(m, dir)
	case tp.how == selfCoding:
		return tp.sendSelfCoding(m, mode, dir)
	case mode == Clone && !tp.flat && !tp.fast:
		return sendWire(m, dir)
	case mode == Share && tp.shallow.hasExtensions && extensionsSet(at, tp.shallow.extensions):
		// Extensions a socket's receiver would decode by its registry:
		// as unknown fields, or as another Go type than the sender set.
		return sendWire(m, dir)
	case tp.nested && (mode == Share || tp.fast) && nestedNeedsWire(protoMessage(m).ProtoReflect(), 0):
		// Share shares nested messages, and a fast clone copies their
		// unknown fields as they are: a socket's receiver parses them.
		return sendWire(m, dir)
	}
	n, wire, err := tp.measureAt(m, at)
	switch {
	case err != nil:
		return nil, 0, marshalError(err)
	case wire:
		return sendWire(m, dir)
	}
	if v, err := checkLimits(n, dir); v != nil || err != nil {
		return v, n, err
	}
	switch {
	case mode == Share:
		return m, n, nil
	case tp.flat && into != nil:
		tp.deepCopy(into, at)
		return delivered, n, nil
	case tp.flat:
		return tp.clone(at), n, nil
	}
	return m.(fastCloner).CloneMessageVT(), n, nil
}
