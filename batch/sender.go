package batch

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A Sender gathers items into batches of type M and sends each with send,
// typically a stream's Send.
// It calls send from one goroutine at a time, as gRPC requires.
// It never touches a batch again once sent.
// It is safe for concurrent use.
//
// A Send error is returned by the Add or Flush that sends.
// For a batch that MaxAge sent, the next Add or Flush returns it.
// From then on every Add and Flush returns it.
// Call Flush (or Close) before the handler returns.
// Then no item is left behind and no timer outlives the stream.
type Sender[M, I any] struct {
	send func(*M) error
	add  func(*M, I)
	cfg  config
	size func(I) int // nil: sizes are not measured

	mu      sync.Mutex
	cur     *M // the batch being filled, nil when empty
	items   int
	bytes   int
	tag     int         // the size of the items' field's tag, 0 until the first item shows it
	timer   *time.Timer // MaxAge's, while cur is pending
	firing  int         // timers that fired and have not yet looked at cur
	settled sync.Cond   // signalled when firing drops
	err     error
	closed  bool
}

// ErrClosed is what Add returns after Close.
var ErrClosed = errors.New("batch: Add after Close")

// NewSender returns a Sender that adds items to a batch with add and sends
// batches with send.
// Each batch starts as a new(M).
// Appender's add function makes its repeated field with room for a whole
// batch.
//
// NewSender panics on mistakes of the program, not of its input:
//   - options out of range: a MaxItems below one, a negative MaxBytes or
//     MaxAge;
//   - MaxBytes for items that are not proto.Message, without an ItemSize of
//     the item type.
func NewSender[M, I any](send func(*M) error, add func(*M, I), opts ...Option) *Sender[M, I] {
	s := &Sender[M, I]{send: send, add: add, cfg: config{maxItems: DefaultMaxItems}}
	s.settled.L = &s.mu
	for _, o := range opts {
		o(&s.cfg)
	}
	if err := s.cfg.check(); err != nil {
		panic(err)
	}
	if send == nil || add == nil {
		panic("batch: NewSender needs a send and an add function")
	}
	if s.cfg.maxBytes > 0 {
		s.size = sizeOf[I](s.cfg.size)
	}
	return s
}

// sizeOf is the function that measures items for MaxBytes.
func sizeOf[I any](given any) func(I) int {
	if given != nil {
		size, ok := given.(func(I) int)
		if !ok {
			panic(fmt.Sprintf("batch: ItemSize's function is a %T, want a func(%T) int", given, *new(I)))
		}
		return size
	}
	if _, ok := any(*new(I)).(proto.Message); !ok {
		panic(fmt.Sprintf("batch: MaxBytes measures items with proto.Size, and a %T is not a proto.Message: give ItemSize", *new(I)))
	}
	return func(item I) int { return proto.Size(any(item).(proto.Message)) }
}

// tagSize is the size of the tag of the field that add put a batch's
// first item in: from one byte for numbers up to 15 to five for the
// largest. For a batch that is not a proto.Message (a gogoproto one,
// say), or whose items are not in a repeated field of its own, it is the
// largest, five bytes, so that MaxBytes holds whatever the field.
func tagSize(m any) int {
	size := 0
	if m, ok := m.(proto.Message); ok {
		m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			if fd.IsList() {
				size = max(size, protowire.SizeTag(fd.Number()))
			}
			return true
		})
	}
	if size == 0 {
		return protowire.SizeTag(protowire.MaxValidNumber)
	}
	return size
}

// Add adds item to the batch, and sends the batch if that fills it.
// If this or an earlier batch had a Send error, Add returns it and does not
// take item.
func (s *Sender[M, I]) Add(item I) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return ErrClosed
	}
	n := 0
	if s.size != nil {
		n = s.tag + protowire.SizeBytes(s.size(item)) // the item, its length and its field's tag
		if s.cur != nil && s.bytes+n > s.cfg.maxBytes {
			if err := s.flush(); err != nil {
				return err
			}
		}
	}
	if s.cur == nil {
		s.cur = new(M)
		if s.cfg.maxAge > 0 {
			s.arm(s.cur)
		}
	}
	s.add(s.cur, item)
	if s.size != nil && s.tag == 0 {
		// The first item starts a batch of its own, so nothing was
		// compared with its cost yet.
		s.tag = tagSize(s.cur)
		n += s.tag
	}
	s.items++
	s.bytes += n
	if s.items >= s.cfg.maxItems || (s.size != nil && s.bytes >= s.cfg.maxBytes) {
		return s.flush()
	}
	return nil
}

// Flush sends the batch being filled, if any.
// It returns the Send error of this or an earlier batch.
// The Sender stays usable.
// Once Flush has returned, the Sender calls send again only for a later Add.
// Until then the caller may send other messages on the same stream itself,
// such as a bidirectional stream's answers between batches.
// Those sends are never two at once with the Sender's.
// They come in order after every item added before.
func (s *Sender[M, I]) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	if err == nil && s.cur != nil {
		err = s.flush()
	}
	s.settle()
	return err
}

// Close flushes, and makes every later Add fail with ErrClosed. Once it
// has returned, no timer of the Sender runs.
func (s *Sender[M, I]) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.Flush()
}

// flush sends cur. It is called with mu held, and cur not nil.
func (s *Sender[M, I]) flush() error {
	m := s.cur
	s.cur, s.items, s.bytes = nil, 0, 0
	if s.timer != nil {
		if !s.timer.Stop() {
			s.firing++ // its function runs, finds cur changed, and does nothing
		}
		s.timer = nil
	}
	if err := s.send(m); err != nil {
		s.err = err
		return err
	}
	return nil
}

// arm sends m when it is MaxAge old, if it is still being filled then.
func (s *Sender[M, I]) arm(m *M) {
	s.timer = time.AfterFunc(s.cfg.maxAge, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.cur != m {
			s.firing--
			s.settled.Broadcast()
			return
		}
		s.timer = nil
		if s.err == nil {
			s.flush() // its error is kept for the next Add or Flush
		}
	})
}

// settle waits, with mu held, until every timer that fired has looked at
// the batch and let go.
func (s *Sender[M, I]) settle() {
	for s.firing > 0 {
		s.settled.Wait()
	}
}
