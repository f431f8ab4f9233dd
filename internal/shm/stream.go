package shm

import (
	"context"
	"fmt"
	"sync"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"github.com/localgrpc/localgrpc/internal/shmwire"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// eventKind is what arrived on a stream, in the order it arrived.
type eventKind uint8

const (
	evHeader   eventKind = iota + 1 // the server's response header (client side)
	evMessage                       // a whole message
	evEnd                           // the client sent its last message (server side)
	evTrailers                      // the call's status and trailer (client side)
	evReset                         // the stream ended early: st says why
)

type event struct {
	kind eventKind
	md   metadata.MD
	msg  mem.Buffer // a message: freed by the codec that decodes it
	// oversize is, for a message over the receiver's limit, its size; msg
	// is then nil.
	oversize int
	st       *status.Status
	conn     bool // a reset because the connection ended
	refused  bool // a reset this side made, which told the peer already
}

// stream is one call's state on one side of a connection. The connection's
// reader pushes what arrives; the call's goroutine takes it in order.
type stream struct {
	id uint32
	c  *conn

	mu     sync.Mutex
	events []event // from head on: not taken yet
	head   int
	first  [3]event // events' first array: a unary call's three fit
	// wake has a token when events were pushed since the taker last
	// looked.
	wake chan struct{}
	// over is set once a last event (trailers, a reset) was pushed or the
	// call ended here: nothing more is taken, a writer waiting for window
	// gives up.
	over bool
	// partial is the message whose frames are arriving; maxRecv bounds it.
	// size is its length where its first frame said it (else -1), and held
	// the pool's buffer partial is in, if it is.
	partial []byte
	held    *[]byte
	size    int
	maxRecv int
	// dropping: the frames of a message over maxRecv are arriving.
	dropping bool
	// remoteEnd: the peer sent End, or its trailers.
	remoteEnd bool
	// onOver, when set, is called once the peer ended the stream: the
	// server's side cancels its call's context so. The end of the whole
	// connection reaches the call through its binding's closed context
	// instead, as a closed connection reaches grpc-go's handlers.
	onOver func()

	// recvWin is what the peer may still send on the stream; ack what the
	// call took that was not credited back yet.
	recvWin int64
	ack     int64

	// sendWin is what the peer lets the stream still send. credited,
	// made when a writer first waits for window, gets a token when it
	// grows or the stream is over.
	sendWin  int64
	credited chan struct{}

	// out is a unary call's request as the channel encoded it, then its
	// response for the channel to decode, in outData.
	out     inprocconn.Encoded
	outData [1]mem.Buffer
}

func newStream(c *conn, id uint32, maxRecv int) *stream {
	s := &stream{
		id: id, c: c, maxRecv: maxRecv, size: -1,
		wake:    make(chan struct{}, 1),
		recvWin: streamWindow,
		sendWin: int64(c.peer.Window),
	}
	s.events = s.first[:0]
	return s
}

// push queues e for the call. A last event closes the stream to more.
func (s *stream) push(e event) {
	s.mu.Lock()
	if s.over {
		s.mu.Unlock()
		return
	}
	s.events = append(s.events, e)
	last := e.kind == evTrailers || e.kind == evReset
	if last {
		s.overLocked()
	}
	s.mu.Unlock()
	if last && !e.conn && s.onOver != nil {
		s.onOver()
	}
	signal(s.wake)
}

// overLocked marks the stream over and wakes a writer waiting for window.
func (s *stream) overLocked() {
	s.over = true
	if s.credited != nil {
		signal(s.credited)
	}
}

// signal leaves a token in c, a channel of capacity 1, unless one is
// there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// isOver reports whether the stream is over.
func (s *stream) isOver() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.over
}

// end closes the stream here: the call is done with it.
func (s *stream) end() {
	s.mu.Lock()
	if !s.over {
		s.overLocked()
	}
	s.mu.Unlock()
	s.c.remove(s)
}

// reset ends the stream with st, for the call to see.
func (s *stream) reset(st *status.Status) {
	s.push(event{kind: evReset, st: st})
}

// next takes the next event, waiting for one until ctx ends.
func (s *stream) next(ctx context.Context) (event, error) { return s.nextUntil(ctx, nil) }

// errStopped is nextUntil's when its stop channel closed.
var errStopped = status.Error(codes.Canceled, "grpc: the client connection is closing")

// nextUntil is next, waiting until ctx ends or stop closes.
func (s *stream) nextUntil(ctx context.Context, stop <-chan struct{}) (event, error) {
	for {
		s.mu.Lock()
		if s.head < len(s.events) {
			e := s.events[s.head]
			s.events[s.head] = event{}
			s.head++
			if s.head == len(s.events) {
				s.events, s.head = s.events[:0], 0
			}
			s.mu.Unlock()
			if e.msg != nil {
				s.took(e.msg.Len())
			}
			return e, nil
		}
		s.mu.Unlock()
		if err := s.c.await(ctx, stop, s.wake); err != nil {
			return event{}, err
		}
	}
}

// took credits the peer back for n bytes the call took, once a quarter
// of the window is due, as HTTP/2 implementations do.
func (s *stream) took(n int) {
	s.mu.Lock()
	s.ack += int64(n)
	due := s.ack
	if due < streamWindow/4 || s.over {
		s.mu.Unlock()
		return
	}
	s.ack = 0
	s.recvWin += due
	s.mu.Unlock()
	s.c.write(shmwire.AppendFrame(nil, s.id, shmwire.Window, 0, shmwire.AppendWindow(nil, uint32(due))))
}

// receive takes a Message frame from the reader. An error means the peer
// broke the stream's rules.
func (s *stream) receive(f frame) error {
	h, p := f.h, f.p
	s.mu.Lock()
	if s.remoteEnd {
		s.mu.Unlock()
		return fmt.Errorf("shm: a message on stream %d after its sender ended it", s.id)
	}
	if h.Flags&shmwire.End != 0 {
		// End comes on an empty frame of its own, after the last message.
		if len(p) > 0 || s.partial != nil || h.Flags&shmwire.More != 0 {
			s.mu.Unlock()
			return fmt.Errorf("shm: stream %d ended inside a message", s.id)
		}
		s.remoteEnd = true
		s.mu.Unlock()
		s.push(event{kind: evEnd})
		return nil
	}
	size := -1 // the whole message's, where a Sized frame said it
	if h.Flags&shmwire.Sized != 0 {
		n, rest, err := shmwire.ParseSize(p)
		switch {
		case err != nil:
		case s.partial != nil || s.dropping:
			err = fmt.Errorf("shm: stream %d sized a message inside another", s.id)
		case uint64(n) <= uint64(len(rest)):
			err = fmt.Errorf("shm: stream %d sized a message of %d bytes on a first frame of %d", s.id, n, len(rest))
		}
		if err != nil {
			s.mu.Unlock()
			return err
		}
		size, p = int(n), rest
	}
	s.recvWin -= int64(len(p))
	if s.recvWin < 0 {
		s.mu.Unlock()
		return fmt.Errorf("shm: stream %d sent past its flow-control window", s.id)
	}
	more := h.Flags&shmwire.More != 0
	if s.dropping {
		// The rest of a message over the limit: dropped, its window
		// given back at once.
		s.dropping = more
		s.recvWin += int64(len(p))
		s.mu.Unlock()
		s.creditNow(len(p))
		return nil
	}
	if more || s.partial != nil {
		if got := max(size, len(s.partial)+len(p)); got > s.maxRecv {
			// Over the limit: not gathered, the rest of its frames
			// dropped. The call gets its size, which the channel refuses
			// as grpc-go's receiver refuses a message over its limit:
			// the handler runs, and its stats handlers hear of the call.
			s.ack += int64(len(s.partial)) // credited as it came, never taken
			s.partial, s.held, s.size = nil, nil, -1
			s.dropping = more
			s.recvWin += int64(len(p))
			s.mu.Unlock()
			s.creditNow(len(p))
			s.push(event{kind: evMessage, oversize: got})
			return nil
		}
		if err := s.gather(p, f.owned, size); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	var credit int64
	if more {
		// The rest of the message needs window that taking it would
		// free: what arrived of it is credited back now.
		credit = int64(len(p))
		s.recvWin += credit
		s.ack -= credit // taking the whole message credits it once
		s.mu.Unlock()
		s.creditNow(len(p))
		return nil
	}
	var msg mem.Buffer
	switch {
	case s.partial != nil:
		if s.size >= 0 && len(s.partial) != s.size {
			s.mu.Unlock()
			return fmt.Errorf("shm: stream %d sent %d bytes of a message sized %d", s.id, len(s.partial), s.size)
		}
		msg = gathered(s.partial, s.held)
	case f.owned:
		msg = mem.SliceBuffer(p)
	default:
		msg = mem.Copy(p, recvPool)
	}
	s.partial, s.held, s.size = nil, nil, -1
	s.mu.Unlock()
	s.push(event{kind: evMessage, msg: msg})
	return nil
}

// creditNow gives the peer back n bytes of window, from the reader.
func (s *stream) creditNow(n int) {
	if n > 0 {
		s.c.queueCtrl(shmwire.AppendFrame(nil, s.id, shmwire.Window, 0, shmwire.AppendWindow(nil, uint32(n))))
	}
}

// gather adds p, a frame of a message arriving in several, to
// s.partial; size is the message's length where its first frame said it.
func (s *stream) gather(p []byte, owned bool, size int) error {
	switch {
	case size >= 0:
		s.size = size
		s.partial, s.held = newMessageBuf(size)
	case s.partial == nil && owned:
		s.partial = p // a frame read from the socket is ours already
		return nil
	case s.size >= 0 && len(s.partial)+len(p) > s.size:
		return fmt.Errorf("shm: stream %d sent more than the %d bytes it sized a message", s.id, s.size)
	}
	s.partial = append(s.partial, p...)
	return nil
}

// encodedOf is the message of an evMessage, for a channel to take.
func (s *stream) encodedOf(e event) *inprocconn.Encoded {
	if e.oversize > 0 {
		return &inprocconn.Encoded{Oversize: e.oversize, Limit: s.maxRecv}
	}
	return &inprocconn.Encoded{Data: encoded(e.msg)}
}

// credit adds n to what the stream may send.
func (s *stream) credit(n int64) {
	s.mu.Lock()
	s.sendWin += n
	if s.credited != nil {
		signal(s.credited)
	}
	s.mu.Unlock()
}

// window takes up to want bytes of window, waiting for some until ctx ends
// or the stream does.
func (s *stream) window(ctx context.Context, want int) (int, error) {
	for {
		s.mu.Lock()
		if s.sendWin > 0 {
			n := int(min(int64(want), s.sendWin))
			s.sendWin -= int64(n)
			s.mu.Unlock()
			return n, nil
		}
		if s.over {
			s.mu.Unlock()
			return 0, errStreamOver
		}
		if s.credited == nil {
			s.credited = make(chan struct{}, 1)
		}
		credited := s.credited
		s.mu.Unlock()
		// The connection's failure ends the stream, which credited says.
		if err := s.c.await(ctx, nil, credited); err != nil {
			return 0, err
		}
	}
}

var errStreamOver = status.Error(codes.Canceled, "shm: the stream ended")

// send writes before (whole frames: a Headers frame, say), then msg as
// Message frames, then after (whole frames: trailers, an End frame). A
// message the window cannot take at once goes out in pieces as the peer
// credits it; where the peer takes it, the first piece says the whole
// message's length (see shmwire.Sized).
func (s *stream) send(ctx context.Context, before []byte, msg []byte, after []byte) error {
	c := s.c
	total := len(msg)
	first := true
	for first || len(msg) > 0 {
		n := min(len(msg), c.frameMax)
		if n > 0 {
			var err error
			if n, err = s.window(ctx, n); err != nil {
				return err
			}
		}
		f, length := uint8(0), n
		if n < len(msg) {
			f = shmwire.More
			if first && c.sized {
				f |= shmwire.Sized
				length += shmwire.SizeLen
			}
		}
		c.wmu.Lock()
		head := c.wbuf[:0]
		if first {
			head = append(head, before...)
		}
		head = shmwire.Header{Length: uint32(length), Stream: s.id, Type: shmwire.Message, Flags: f}.Append(head)
		if f&shmwire.Sized != 0 {
			head = shmwire.AppendSize(head, uint32(total))
		}
		var tail []byte
		if n == len(msg) {
			tail = after
		}
		err := c.writeParts(head, msg[:n], tail)
		msg = msg[n:]
		c.wmu.Unlock()
		if err != nil {
			return status.Error(codes.Unavailable, connClosedMessage(err))
		}
		first = false
	}
	return nil
}
