package handover

import "sync/atomic"

// A message whose size plan knows every field is deep-copied by its
// plans: its top level, then new backing arrays for its bytes, its lists
// and its unknown fields. Strings are shared, as Go never changes a
// string's bytes. That is proto.Clone for the messages most streams carry,
// at a fraction of its cost, since it takes no reflection per field.

// clone returns a deep copy of the message at src, of s's type, which is
// flat: into the message spare holds, if it holds one of s's type.
func (s *strategy) clone(src addr, spare *Spare) any {
	if v := spare.take(s); v != nil {
		s.deepCopy(dataWord(v), src)
		return v
	}
	v, at := newOf(s.t.Elem())
	s.deepCopy(at, src)
	return v
}

// A Spare hands copies back from a stream's receiver to its sender, for
// Clone to copy later messages into: a stream that copies every message
// then allocates one top level a message, not two. A stream has one a
// direction. It is a ring of spareCap copies, with one goroutine at a
// time giving (the receiver) and one taking (the sender), which the
// misuse guard ensures: given and taken alone order the two, as a
// queue's indexes do. The zero Spare is empty.
type Spare struct {
	given atomic.Uint64 // copies the receiver put in the ring
	_     [cacheLine - 8]byte
	taken atomic.Uint64 // copies the sender took out of it
	_     [cacheLine - 8]byte
	ring  *[spareCap]spareCopy // made by the first Release
}

// spareCap is as many copies as a stream's default window holds: a
// sender that runs ahead of its receiver by a window, as one on the same
// processor does, finds a spare for every message of the next.
const spareCap = 64

// cacheLine keeps the sender's index apart from the receiver's.
const cacheLine = 64

// A spareCopy is a copy Send made, which its receiver is done with, and
// the strategy of its type.
type spareCopy struct {
	v  any
	of *strategy
}

// take returns a copy of s's type from sp, if it holds one.
func (sp *Spare) take(s *strategy) any {
	if sp == nil {
		return nil
	}
	t := sp.taken.Load()
	if t == sp.given.Load() {
		return nil
	}
	c := &sp.ring[t%spareCap]
	v, of := c.v, c.of
	*c = spareCopy{}
	sp.taken.Store(t + 1)
	if of != s {
		return nil
	}
	return v
}

// Release gives back v, what Send returned with mode and slot once
// Receive has given it to its receiver, to spare for a copy of a later
// message: with Clone, a message of a flat type is a copy Send made, whose
// top level Receive copied and nothing refers to any more. Only a caller
// that receives v once may release it (a stream's receiver; not a unary
// handler, which may decode its request twice).
func Release(v any, mode Mode, slot *Slot, spare *Spare) {
	if mode == Clone { // inline: Share calls nothing
		spare.give(v, slot)
	}
}

// give puts v, a copy Send made, in sp if it has room and v's type has a
// size plan, which copies into it.
func (sp *Spare) give(v any, slot *Slot) {
	g := sp.given.Load()
	if g-sp.taken.Load() == spareCap {
		return // the ring is full
	}
	if s := slot.last.Load(); s != nil && s.sizer != nil && s.of(v) != nil {
		s.sizer.drop(dataWord(v))
		if sp.ring == nil {
			sp.ring = new([spareCap]spareCopy)
		}
		sp.ring[g%spareCap] = spareCopy{v: v, of: s}
		sp.given.Store(g + 1)
	}
}

// drop clears what the message at at refers to (its strings, bytes, lists
// and messages), which its receiver may have let go of: a spare copy
// keeps no memory alive.
func (p *sizePlan) drop(at addr) {
	for i := range p.fields {
		f := &p.fields[i]
		switch f.kind {
		case sizeString:
			*field[string](at, f.offset) = ""
		case sizeBytes, sizeUnknown:
			*field[[]byte](at, f.offset) = nil
		case sizeStringList:
			*field[[]string](at, f.offset) = nil
		case sizeMessage:
			*field[addr](at, f.offset) = nil
		case sizeMessageList:
			*field[[]addr](at, f.offset) = nil
		}
	}
}

// deepCopy copies the message at src to the one at dst.
func (s *strategy) deepCopy(dst, src addr) {
	s.sizer.deepCopy(dst, src)
}

// deepCopy copies the message at src, of p's struct, to the one at dst:
// its top level, then new arrays for its bytes and lists and new messages
// for the messages it holds, copied in turn. size found the message to
// need no wire (no nil element in its lists, say).
func (p *sizePlan) deepCopy(dst, src addr) {
	p.shallow.copy(dst, src)
	for i := range p.fields {
		f := &p.fields[i]
		// An empty field comes out nil, as from proto.Clone or a socket.
		switch f.kind {
		case sizeBytes, sizeUnknown:
			if b := *field[[]byte](dst, f.offset); len(b) > 0 {
				*field[[]byte](dst, f.offset) = exactCopy(b)
			} else {
				*field[[]byte](dst, f.offset) = nil
			}
		case sizeStringList:
			if l := *field[[]string](dst, f.offset); len(l) > 0 {
				*field[[]string](dst, f.offset) = exactCopy(l)
			} else {
				*field[[]string](dst, f.offset) = nil
			}
		case sizeMessage:
			if sub := *field[addr](dst, f.offset); sub != nil {
				*field[addr](dst, f.offset) = f.sub.copyOf(sub)
			}
		case sizeMessageList:
			l := *field[[]addr](dst, f.offset)
			if len(l) == 0 {
				*field[[]addr](dst, f.offset) = nil
				continue
			}
			copies := make([]addr, len(l))
			for j, sub := range l {
				copies[j] = f.sub.copyOf(sub)
			}
			*field[[]addr](dst, f.offset) = copies
		}
	}
}

// exactCopy returns a copy of s in an array of its length. slices.Clone
// and bytes.Clone append to an empty slice, which goes through growslice
// and rounds the capacity up: a third of a one-string message's copy.
func exactCopy[E any](s []E) []E {
	c := make([]E, len(s))
	copy(c, s)
	return c
}

// copyOf returns a new copy of the message at src, of p's struct.
func (p *sizePlan) copyOf(src addr) addr {
	at := newAt(p.st)
	p.deepCopy(at, src)
	return at
}
