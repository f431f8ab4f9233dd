package handover

// A message whose size plan knows every field is deep-copied by its
// plans: its top level, then new backing arrays for its bytes, its lists
// and its unknown fields. Strings are shared, as Go never changes a
// string's bytes. That is proto.Clone for the messages most streams carry,
// at a fraction of its cost, since it takes no reflection per field.

// clone returns a deep copy of the message at src, of s's type, which
// is flat.
func (s *strategy) clone(src addr) any {
	if v := s.spares.Get(); v != nil {
		s.deepCopy(dataWord(v), src)
		return v
	}
	v, at := newOf(s.t.Elem())
	s.deepCopy(at, src)
	return v
}

// Release gives back v, what Send returned with mode and slot once
// Receive has given it to its receiver, for a copy of a later message to
// reuse: with Clone, a message of a flat type is a copy Send made, whose
// top level Receive copied and nothing refers to any more. Only a caller
// that receives v once may release it (a stream's receiver; not a unary
// handler, which may decode its request twice).
func Release(v any, mode Mode, slot *Slot) {
	if mode != Clone {
		return
	}
	if s := slot.last.Load(); s != nil && s.spares != nil && s.of(v) != nil {
		s.spares.Put(v)
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
