package handover

import "sync/atomic"

// A message whose size plan knows every field is deep-copied by its
// plans: its top level, then new backing arrays for its bytes, its lists
// and its unknown fields. Strings are shared, as Go never changes a
// string's bytes. That is proto.Clone for the messages most streams carry,
// at a fraction of its cost, since it takes no reflection per field.

// clone returns a deep copy of the message at src, of s's type, which is
// flat: into a copy a receiver released, if spare or s's pool holds one.
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
// direction, with one goroutine at a time giving (the receiver) and one
// taking (the sender), which the misuse guard ensures.
//
// It holds one copy inline, for a sender and receiver that run in step.
// A sender that runs a window ahead of its receiver (on one processor,
// say) needs a window of copies: a stream that gave spareRingAfter
// copies past the inline one makes a ring of them, which its long life
// pays for. Until then, and past the ring, the strategy's pool of its
// type's copies gives and takes, so that copies outlive their stream for
// the next one. The zero Spare is empty.
type Spare struct {
	full atomic.Bool
	v    any       // a copy Send made, which its receiver is done with
	of   *strategy // v's type's
	// ring holds the copies past v, once the stream has given
	// spareRingAfter of them (overflowed, the receiver's count).
	ring       atomic.Pointer[spareRing]
	overflowed int
}

// spareRing is a Spare's copies past the inline one, given by the receiver
// at given and taken by the sender at taken: one of each at a time.
type spareRing struct {
	given, taken atomic.Uint64
	copies       [spareRingSize]spareCopy
}

type spareCopy struct {
	v  any
	of *strategy
}

const (
	// spareRingSize is the default stream window (inproc.DefaultWindow):
	// the copies a sender that runs a window ahead takes back.
	spareRingSize = 64
	// spareRingAfter is how many copies a stream gives past its inline
	// one before it makes a ring: a short stream makes none.
	spareRingAfter = 2 * spareRingSize
)

// take returns a copy of s's type from sp or from s's pool, if either
// holds one; sp may be nil (a unary call), which releases nothing.
func (sp *Spare) take(s *strategy) any {
	if sp == nil {
		return nil
	}
	if sp.full.Load() {
		v, of := sp.v, sp.of
		sp.v, sp.of = nil, nil
		sp.full.Store(false)
		return s.ofOwn(v, of)
	}
	if r := sp.ring.Load(); r != nil {
		if t := r.taken.Load(); t != r.given.Load() {
			c := &r.copies[t%spareRingSize]
			v, of := c.v, c.of
			*c = spareCopy{}
			r.taken.Store(t + 1)
			return s.ofOwn(v, of)
		}
	}
	return s.spares.Get()
}

// Retire gives the copies sp holds back to their types' pools, for other
// streams. It is for the stream's receiver, once the sender takes no more.
func (sp *Spare) Retire() {
	if sp.full.Load() {
		sp.of.spares.Put(sp.v)
		sp.v, sp.of = nil, nil
		sp.full.Store(false)
	}
	if r := sp.ring.Load(); r != nil {
		t, g := r.taken.Load(), r.given.Load()
		for ; t != g; t++ {
			c := &r.copies[t%spareRingSize]
			c.of.spares.Put(c.v)
			*c = spareCopy{}
		}
		r.taken.Store(t)
	}
}

// Len returns how many copies sp holds.
func (sp *Spare) Len() int {
	n := 0
	if sp.full.Load() {
		n++
	}
	if r := sp.ring.Load(); r != nil {
		n += int(r.given.Load() - r.taken.Load())
	}
	return n
}

// ofOwn returns v, a spare copy of of's type, if that is s's; otherwise
// it puts v back in its own type's pool and returns one of s's, if any.
func (s *strategy) ofOwn(v any, of *strategy) any {
	if of != s { // the stream's messages changed type
		of.spares.Put(v)
		return s.spares.Get()
	}
	return v
}

// Release gives back v, what Send returned, once Receive has given it to
// its receiver, to spare for a copy of a later message: with Clone, a
// message of a flat type is a copy Send made, whose top level Receive
// copied and nothing refers to any more. Only a caller that receives v
// once may release it (a stream's receiver; not a unary handler, which
// may decode its request twice).
func (d *Direction) Release(v any) {
	if d.Mode == Clone { // inline: Share calls nothing
		d.Spare.give(v, d.Slot)
	}
}

// give puts v, a copy Send made, in sp, or in its type's pool if sp is
// full, if v's type has a size plan, which copies into it.
func (sp *Spare) give(v any, slot *Slot) {
	s := slot.last.Load()
	if s == nil || s.sizer == nil || s.of(v) == nil {
		return
	}
	if !sp.full.Load() {
		s.sizer.drop(dataWord(v)) // the Spare keeps no message's data alive
		sp.v, sp.of = v, s
		sp.full.Store(true)
		return
	}
	r := sp.ring.Load()
	if r == nil {
		if sp.overflowed++; sp.overflowed < spareRingAfter {
			s.spares.Put(v) // which the collector empties
			return
		}
		r = new(spareRing)
		sp.ring.Store(r)
	}
	g := r.given.Load()
	if g-r.taken.Load() == spareRingSize {
		s.spares.Put(v)
		return
	}
	s.sizer.drop(dataWord(v))
	r.copies[g%spareRingSize] = spareCopy{v, s}
	r.given.Store(g + 1)
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
		case sizeBytes:
			*field[[]byte](at, f.offset) = nil
		case sizeStringList:
			*field[[]string](at, f.offset) = nil
		case sizeMessage:
			*field[addr](at, f.offset) = nil
		case sizeMessageList:
			*field[[]addr](at, f.offset) = nil
		}
	}
	if p.hasUnknown {
		*field[[]byte](at, p.unknown) = nil
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
	p.copyFields(p, dst)
}

// copyEachField is copyFields for any plan: a loop over its fields, on a
// top level copied already.
func (p *sizePlan) copyEachField(dst addr) {
	fields := p.fields // in registers where the copies' calls allow
	for i := range fields {
		f := &fields[i]
		// An empty field comes out nil, as from proto.Clone or a socket;
		// a nil one is left as it is, which saves a write barrier's test.
		switch f.kind {
		case sizeBytes:
			copyBytes(dst, f.offset)
		case sizeStringList:
			if l := *field[[]string](dst, f.offset); len(l) > 0 {
				*field[[]string](dst, f.offset) = exactCopy(l)
			} else if l != nil {
				*field[[]string](dst, f.offset) = nil
			}
		case sizeMessage:
			if sub := *field[addr](dst, f.offset); sub != nil {
				*field[addr](dst, f.offset) = f.sub.copyOf(sub)
			}
		case sizeMessageList:
			l := *field[[]addr](dst, f.offset)
			if len(l) == 0 {
				if l != nil {
					*field[[]addr](dst, f.offset) = nil
				}
				continue
			}
			copies := make([]addr, len(l))
			for j, sub := range l {
				copies[j] = f.sub.copyOf(sub)
			}
			*field[[]addr](dst, f.offset) = copies
		}
	}
	p.copyUnknown(dst)
}

// copyOneStringList is copyFields for a plan of one list of strings.
func (p *sizePlan) copyOneStringList(dst addr) {
	f := &p.fields[0]
	if l := *field[[]string](dst, f.offset); len(l) > 0 {
		*field[[]string](dst, f.offset) = exactCopy(l)
	} else if l != nil {
		*field[[]string](dst, f.offset) = nil
	}
	p.copyUnknown(dst)
}

// copyUnknown copies the unknown fields, the whole of copyFields for a
// plan of one string, which the top level's copy shares.
func (p *sizePlan) copyUnknown(dst addr) {
	if p.hasUnknown {
		copyBytes(dst, p.unknown)
	}
}

// copyBytes gives the []byte field at offset off of the struct at dst an
// array of its own, or nil if it is empty.
func copyBytes(dst addr, off uintptr) {
	if b := *field[[]byte](dst, off); len(b) > 0 {
		*field[[]byte](dst, off) = exactCopy(b)
	} else if b != nil {
		*field[[]byte](dst, off) = nil
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
