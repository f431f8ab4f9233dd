package handover

import (
	"reflect"
	"sync"
	"sync/atomic"

	gproto "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A strategy is how the messages of one Go type cross: a send function
// for each Mode, chosen once, when the type is first sent (see
// newStrategy), and the plans those functions read. It is kept in the
// Slot of the method that sent the type, where the next message of the
// type finds it by its interface's type word.
//
// What a function checks per message stays inside it: unknown fields set,
// extensions set, nested messages that only the wire carries as a socket
// does. A message that needs the wire goes through sendWire, whatever its
// type's strategy.
type strategy struct {
	name  string // the strategy chosen, for tests and debugging
	sends sendFuncs
	t     reflect.Type
	md    protoreflect.MessageDescriptor
	word  typeWord // t's, as the type word of an interface
	// byType: t holds md and no other, so that a message of t is known by
	// its type word alone (one Go type holds every dynamic message).
	byType bool

	// What the send functions read.
	utf8    *utf8Plan    // strings to check, for types the size plan does not know
	sizer   *sizePlan    // knows every field at every depth, or nil
	shallow *shallowPlan // the receiver's top-level copy
	// spares: copies of a flat type its streams' receivers released
	// past what their Spares hold, for the next copies (see Spare).
	spares sync.Pool
	// top is shallow where it copies by moves, for a type known by its
	// type word: the receiver's copy that takes no reflection.
	top *shallowPlan
	// initCheck: the message may hold required fields, so that
	// CheckInitialized must look.
	initCheck bool
	// unknown: where t keeps its unknown fields, if anywhere (hasUnknown).
	unknown    uintptr
	hasUnknown bool
	// nested: a message of t may hold messages that the size plan does not
	// look into, which Share and a fast clone must (see nestedNeedsWire).
	nested bool
}

// A sendFunc is Send for m, a message of s's type at at. into, when not
// nil, is the receiver's message, of s's type: a copy made into it makes
// the function return delivered.
type sendFunc func(s *strategy, m any, at addr, lim Limits, into addr) (any, int, error)

// sendFuncs holds a type's send functions, by Mode: Clone's, then Share's.
// Encode never reaches a strategy.
type sendFuncs [2]sendFunc

// fastCloner is what vtprotobuf generates: a clone without reflection.
type fastCloner interface {
	CloneMessageVT() gproto.Message
}

// strategies holds the strategies made: a method whose messages change
// type (a generated type and a dynamic one, say) finds each one's again
// instead of making it anew.
var strategies planCache[*strategy]

// strategyFor returns the strategy of m, of Go type t, holding md.
func strategyFor(m any, t reflect.Type, md protoreflect.MessageDescriptor) *strategy {
	key := planKey{t, md}
	if s, ok := strategies.load(key); ok {
		return s
	}
	return strategies.store(key, newStrategy(m, t, md))
}

// newStrategy chooses how the messages of m's type cross, as grpc-go's
// proto codec would treat them:
//   - flat: a generated message (open or hybrid API) whose size plan knows
//     every field. Its plans measure and check it. Clone copies it by the
//     plans, which copy as a socket delivers (an empty bytes field comes
//     out nil, where vtprotobuf's CloneVT keeps it as it was).
//   - checked: another generated message, or a legacy one protobuf-go
//     wraps by reflection. Its UTF-8 plan and proto.Size check and
//     measure it. Clone copies it by vtprotobuf's CloneMessageVT if it
//     has one, and through its wire encoding otherwise, the only copy
//     that keeps every value as a socket does (proto.Clone drops a -0
//     and leaves unknown fields unparsed).
//   - self-coding: a legacy message with its own Marshal, Unmarshal and
//     Size, as gogoproto's, which grpc-go's codec encodes by its Marshal,
//     which checks no UTF-8. Share measures it by its Size. Clone encodes
//     it once and decodes it once.
//   - wire: what only the wire encoding copies as grpc-go would. Those are
//     dynamic messages (one Go type for every message, fields in maps),
//     generated messages with lazy fields (their getters decode while the
//     message is read), generated messages whose layout is not what the
//     plans assume (see verifyLayout), and legacy messages with a Marshal
//     or Unmarshal of their own, or holding one, that are not self-coding
//     (see codesItselfWithin).
//
// Share copies as Clone does where a top level of the receiver's own would
// still share what the receiver may change: a legacy message's
// extensions.
func newStrategy(m any, t reflect.Type, md protoreflect.MessageDescriptor) *strategy {
	s := &strategy{name: "wire", sends: sendFuncs{sendViaWire, sendViaWire}, t: t, md: md, word: wordOf(m), initCheck: true}
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return s
	}
	st := t.Elem()
	_, v2 := m.(gproto.Message)
	_, self := m.(selfCoder)
	_, fast := m.(fastCloner)
	switch {
	case isGenerated(st) && generatedStruct(st, md):
		s.byType = true
		if hasLazyFields(st) {
			return s
		}
		sizer := buildSizePlan(st, md)
		if !verifyLayout(st, md, sizer) {
			return s
		}
		s.prepare(st, md)
		if s.sizer = sizer; sizer != nil {
			s.name, s.sends = "flat", sendFuncs{cloneFlat, shareFlat}
			return s
		}
		s.checked(md, fast)
	case !v2 && self:
		s.byType = true
		s.prepare(st, md)
		s.name, s.sends = "self-coding", sendFuncs{cloneSelfCoding, shareSelfCoding}
		if hasLegacyExtensions(st) {
			s.sends[Share] = cloneSelfCoding
		}
	case !v2 && codesItselfWithin(t, map[reflect.Type]bool{}):
		// protobuf encodes and decodes such a message by its own Marshal
		// or Unmarshal, whose errors are the call's and which check no
		// UTF-8: it crosses as it encodes.
		s.byType = true
	case !v2: // a legacy message, wrapped by reflection
		s.byType = true
		s.prepare(st, md)
		s.checked(md, fast)
		if hasLegacyExtensions(st) {
			s.sends[Share] = s.sends[Clone]
		}
	}
	return s
}

// prepare finds what every strategy but the wire's reads of st, the
// struct of md.
func (s *strategy) prepare(st reflect.Type, md protoreflect.MessageDescriptor) {
	s.initCheck = mayNeedInit(md, map[protoreflect.FullName]bool{})
	s.shallow = shallowPlanFor(st)
	if s.byType && s.shallow.moves != nil {
		s.top = s.shallow
	}
	s.unknown, s.hasUnknown = unknownField(st)
}

// checked makes s the checked strategy, which fast says may clone by
// CloneMessageVT.
func (s *strategy) checked(md protoreflect.MessageDescriptor, fast bool) {
	s.name = "checked"
	s.utf8 = utf8PlanFor(s.t, md)
	s.nested = hasNested(md)
	s.sends = sendFuncs{sendViaWire, shareChecked}
	if fast {
		s.sends[Clone] = cloneFast
	}
}

// typedNil is the strategy of a typed nil message of any type, which
// encodes as an empty message.
var typedNil = &strategy{name: "typed nil", sends: sendFuncs{sendTypedNil, sendTypedNil}}

func sendTypedNil(_ *strategy, m any, _ addr, _ Limits, _ addr) (any, int, error) {
	if err := gproto.CheckInitialized(protoMessage(m)); err != nil {
		return nil, 0, marshalError(err)
	}
	return &wire{}, 0, nil
}

// sendViaWire sends m through its wire encoding.
func sendViaWire(_ *strategy, m any, _ addr, lim Limits, _ addr) (any, int, error) {
	return sendWire(m, lim)
}

// shareFlat is Share for a flat message.
func shareFlat(s *strategy, m any, at addr, lim Limits, _ addr) (any, int, error) {
	if s.unknownSet(at) || s.extensionsSet(at) {
		return sendWire(m, lim)
	}
	v, n, err := s.fitFlat(m, at, lim)
	if v != nil || err != nil {
		return v, n, err
	}
	return m, n, nil
}

// cloneFlat is Clone for a flat message: a copy by its plans, into the
// receiver's message if it is at hand.
func cloneFlat(s *strategy, m any, at addr, lim Limits, into addr) (any, int, error) {
	if s.unknownSet(at) {
		return sendWire(m, lim)
	}
	v, n, err := s.fitFlat(m, at, lim)
	switch {
	case v != nil || err != nil:
		return v, n, err
	case into != nil:
		s.deepCopy(into, at)
		return delivered, n, nil
	}
	return s.clone(at, lim.Spare), n, nil
}

// shareChecked is Share for a checked message.
func shareChecked(s *strategy, m any, at addr, lim Limits, _ addr) (any, int, error) {
	if s.unknownSet(at) || s.extensionsSet(at) || s.nestedNeedsWire(m) {
		return sendWire(m, lim)
	}
	v, n, err := s.fitChecked(m, at, lim)
	if v != nil || err != nil {
		return v, n, err
	}
	return m, n, nil
}

// cloneFast is Clone for a checked message by its CloneMessageVT.
func cloneFast(s *strategy, m any, at addr, lim Limits, _ addr) (any, int, error) {
	// A fast clone copies nested unknown fields as they are, where a
	// socket's receiver parses them.
	if s.unknownSet(at) || s.nestedNeedsWire(m) {
		return sendWire(m, lim)
	}
	v, n, err := s.fitChecked(m, at, lim)
	if v != nil || err != nil {
		return v, n, err
	}
	return m.(fastCloner).CloneMessageVT(), n, nil
}

// fitFlat checks and measures m, a flat message at at, by its plans, and
// returns its size n if it crosses by them. Otherwise v or err is what
// Send returns instead: the wire encoding, the refusal, or the stand-in
// of a message over the receiver's limit.
func (s *strategy) fitFlat(m any, at addr, lim Limits) (v any, n int, err error) {
	// protobuf's Marshal finds a string that is not UTF-8 as it encodes,
	// and an unset required field after: in that order.
	n, wire, err := s.sizer.sizeAt(at, 0)
	if err == nil && !wire && s.initCheck {
		err = checkInitialized(m)
	}
	switch {
	case err != nil:
		return nil, 0, marshalError(err)
	case wire:
		return sendWire(m, lim)
	case lim.over(n):
		return overLimits(n, lim)
	}
	return nil, n, nil
}

// fitChecked is fitFlat for a checked message.
func (s *strategy) fitChecked(m any, at addr, lim Limits) (v any, n int, err error) {
	n, err = s.measureChecked(m, at)
	switch {
	case err != nil:
		return nil, 0, marshalError(err)
	case lim.over(n):
		return overLimits(n, lim)
	}
	return nil, n, nil
}

// unknownSet reports whether the message at at holds unknown fields, which
// a socket's receiver would parse: only the wire carries them so.
func (s *strategy) unknownSet(at addr) bool {
	return s.hasUnknown && len(bytesAt(at, s.unknown)) != 0
}

// extensionsSet reports whether the message at at has extensions set,
// which a socket's receiver would decode by its registry: as unknown
// fields, or as another Go type than the sender set. Share takes the wire
// for them.
func (s *strategy) extensionsSet(at addr) bool {
	return s.shallow.hasExtensions && extensionsSet(at, s.shallow.extensions)
}

// nestedNeedsWire reports whether m holds a message that only the wire
// carries as a socket does (see nestedNeedsWire).
func (s *strategy) nestedNeedsWire(m any) bool {
	return s.nested && nestedNeedsWire(protoMessage(m).ProtoReflect(), 0)
}

// checkInitialized is proto.CheckInitialized for m.
func checkInitialized(m any) error {
	return gproto.CheckInitialized(protoMessage(m))
}

// measureChecked checks and measures m, a checked message at at, as
// protobuf's Marshal would: its strings, its required fields, its size.
func (s *strategy) measureChecked(m any, at addr) (int, error) {
	pm := protoMessage(m)
	switch {
	case s.utf8 != nil && s.utf8.generic:
		if err := checkReflect(pm.ProtoReflect()); err != nil {
			return 0, err
		}
	case s.utf8 != nil:
		if err := s.utf8.check(at); err != nil {
			return 0, err
		}
	}
	if s.initCheck {
		if err := gproto.CheckInitialized(pm); err != nil {
			return 0, err
		}
	}
	return gproto.Size(pm), nil
}

// strategyOf returns the strategy of m, kept in last from now on, and m's
// address; nil if m is not a protobuf message, which goes through the
// codec.
func strategyOf(m any, last *atomic.Pointer[strategy]) (*strategy, addr) {
	pm := protoMessage(m)
	if pm == nil {
		return nil, nil
	}
	t, md := reflect.TypeOf(m), pm.ProtoReflect().Descriptor()
	s := last.Load()
	if s == nil || s.t != t || s.md != md {
		s = strategyFor(m, t, md)
		last.Store(s)
	}
	if t.Kind() != reflect.Pointer {
		return s, nil
	}
	at := dataWord(m)
	if at == nil {
		return typedNil, nil
	}
	return s, at
}

// known returns the strategy last holds if x is a non-nil message of its
// Go type, and x's address: found by the type word of x's interface, so
// that the messages of the one type most calls and streams send take no
// reflection, no lookup and no interface conversion.
func known(x any, last *atomic.Pointer[strategy]) (*strategy, addr) {
	s := last.Load()
	if s == nil || !s.byType {
		return nil, nil
	}
	if at := s.of(x); at != nil {
		return s, at
	}
	return nil, nil
}

// of returns x's address if x is a non-nil message of s's Go type, nil
// otherwise. A second message is matched against the strategy found for
// the first with it, not by loading it again: another goroutine may have
// stored another type's in between.
func (s *strategy) of(x any) addr {
	if wordOf(x) != s.word {
		return nil
	}
	return dataWord(x)
}
