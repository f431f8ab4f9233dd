package inproc

import (
	"math/bits"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/inproc/internal/handover"
)

// queue carries the messages of one direction of one stream: a bounded ring
// with one sender and one receiver at a time, as gRPC allows, so neither
// side takes a lock. It is bounded in messages and in bytes, as HTTP/2
// bounds a stream in bytes: a message fits if both bounds allow it, or if
// the queue is empty, so that one message larger than the window still
// passes. A side that finds nothing to do waits as its waiter says
// (parking, or resuming a coroutine); the other side wakes a parked one.
// The receiver wakes a parked sender only once a quarter of the window is
// free, as HTTP/2 sends window updates in steps, so that a fast sender does
// not park and wake once per message. A second goroutine that sends (or
// receives) while another does is refused (see enter), so misuse cannot
// corrupt the ring.
type queue struct {
	// The sender's.
	tail      atomic.Uint64 // messages pushed
	sentBytes atomic.Uint64 // bytes pushed
	pending   atomic.Uint64 // the size of the message a waiting sender holds
	closed    atomic.Bool   // the sender sent its last message
	sending   atomic.Bool   // a goroutine is in push
	seenHead  uint64        // the sender's last look at head
	seenRecvd uint64        // and at recvdBytes
	_         [cacheLine]byte

	// The receiver's.
	head       atomic.Uint64 // messages popped
	recvdBytes atomic.Uint64 // bytes popped
	receiving  atomic.Bool   // a goroutine is in pop
	seenTail   uint64        // the receiver's last look at tail
	_          [cacheLine]byte

	receiver, sender parker

	// gone: the receiver takes no more messages. The receiver sets it
	// once, the sender reads it every push: kept off the line the
	// receiver writes every pop.
	gone atomic.Bool

	slots       []parcel // a power of two long, at least window
	mask        uint64
	window      uint64
	windowBytes uint64
	threshold   uint64 // free slots at which a parked sender is woken

	// dir is how the messages cross, fixed when the stream begins.
	dir handover.Direction
	// spare: a copy the receiver is done with, for the sender's next
	// Clone (see handover.Spare).
	spare handover.Spare
}

// A parcel is a message in a queue, with its encoded size.
type parcel struct {
	v any
	n uint64
}

const cacheLine = 64

// need is what a side of a queue waits for.
type need uint8

const (
	needRoom    need = iota // the sender waits for a free slot
	needMessage             // the receiver waits for a message or the end
)

// A waiter is how one side of a stream waits for the other (its runner
// decides how): it returns true once q.satisfies(n) may hold, or false if
// the call ended first. first says it is the first wait of this push or pop.
type waiter interface {
	block(q *queue, n need, first bool) bool
}

// init sizes the queue.
func (q *queue) init(window, windowBytes int) {
	q.window = uint64(window)
	q.windowBytes = uint64(windowBytes)
	q.slots = make([]parcel, 1<<bits.Len64(q.window-1))
	q.mask = uint64(len(q.slots) - 1)
	q.threshold = max(q.window/4, 1)
	q.receiver.init()
	q.sender.init()
}

// fits reports whether a message of n bytes fits behind tail, given the
// receiver has popped head messages and recvd bytes.
func (q *queue) fits(tail, head, recvd, n uint64) bool {
	if tail == head {
		return true
	}
	return tail-head < q.window && q.sentBytes.Load()-recvd+n <= q.windowBytes
}

// satisfies reports whether the side that needs n can go on.
func (q *queue) satisfies(n need) bool {
	if n == needRoom {
		return q.gone.Load() || q.fits(q.tail.Load(), q.head.Load(), q.recvdBytes.Load(), q.pending.Load())
	}
	return q.head.Load() != q.tail.Load() || q.closed.Load()
}

// worthWaking reports, to the receiver, that a parked sender should be
// woken: its message fits, and a quarter of the window is free or the
// queue is empty.
func (q *queue) worthWaking() bool {
	tail, head, recvd := q.tail.Load(), q.head.Load(), q.recvdBytes.Load()
	if tail == head {
		return true
	}
	if !q.fits(tail, head, recvd, q.pending.Load()) {
		return false
	}
	inFlight := q.sentBytes.Load() - recvd
	return q.window-(tail-head) >= q.threshold && q.windowBytes-min(inFlight, q.windowBytes) >= q.windowBytes/4
}

// parker is where the side that needs n parks.
func (q *queue) parker(n need) *parker {
	if n == needRoom {
		return &q.sender
	}
	return &q.receiver
}

// wait waits until n is satisfied; false if w gave up.
func (q *queue) wait(n need, w waiter) bool {
	for first := true; !q.satisfies(n); first = false {
		if !w.block(q, n, first) {
			return false
		}
	}
	return true
}

// push adds v, of n bytes, waiting while the window is full. It returns
// false, without adding v, if the receiver is gone or w gave up.
func (q *queue) push(v any, n uint64, w waiter) bool {
	t := q.tail.Load()
	if !q.fits(t, q.seenHead, q.seenRecvd, n) {
		q.seenHead, q.seenRecvd = q.head.Load(), q.recvdBytes.Load()
		if !q.fits(t, q.seenHead, q.seenRecvd, n) {
			q.pending.Store(n)
			if !q.wait(needRoom, w) {
				return false
			}
			q.seenHead, q.seenRecvd = q.head.Load(), q.recvdBytes.Load()
		}
	}
	if q.gone.Load() {
		return false
	}
	q.slots[t&q.mask] = parcel{v: v, n: n}
	q.sentBytes.Store(q.sentBytes.Load() + n)
	q.tail.Store(t + 1)
	q.receiver.unpark()
	return true
}

// close tells the receiver that nothing follows what was pushed.
func (q *queue) close() {
	q.closed.Store(true)
	q.receiver.unpark()
}

// kick wakes both sides, whose call may have ended.
func (q *queue) kick() {
	q.receiver.kick()
	q.sender.kick()
}

// abandon tells the sender that nothing more will be taken.
func (q *queue) abandon() {
	q.gone.Store(true)
	q.sender.unpark()
}

// pop takes the next message and its size. ok is false if the queue is
// closed and empty, or if w gave up waiting; then aborted is true.
func (q *queue) pop(w waiter) (p parcel, ok, aborted bool) {
	h := q.head.Load()
	if h == q.seenTail {
		if !q.wait(needMessage, w) {
			return parcel{}, false, true
		}
		if q.seenTail = q.tail.Load(); h == q.seenTail {
			q.retire()
			return parcel{}, false, false // closed and drained
		}
	}
	// The slot lets go of its message, so that a stream holds no more than
	// its window of messages not yet received.
	p, q.slots[h&q.mask] = q.slots[h&q.mask], parcel{}
	if p.n > 0 {
		q.recvdBytes.Store(q.recvdBytes.Load() + p.n)
	}
	q.head.Store(h + 1)
	if q.sender.parked.Load() && q.worthWaking() {
		q.sender.unpark()
	}
	return p, true, false
}

// retire gives the Spare's copies back, for other streams, once the
// receiver took the last message: the sender, which closed the queue,
// sends no more. The send guard keeps out a sender that would (a
// misuse), which then leaves the copies be.
func (q *queue) retire() {
	if q.enter(true) {
		q.spare.Retire()
		q.leave(true)
	}
}

// take pops the next message without waiting, if one was pushed before
// tail stood at upTo.
func (q *queue) take(upTo uint64) (parcel, bool) {
	h := q.head.Load()
	if h >= upTo || h >= q.tail.Load() {
		return parcel{}, false
	}
	p := q.slots[h&q.mask]
	q.slots[h&q.mask] = parcel{}
	if p.n > 0 {
		q.recvdBytes.Store(q.recvdBytes.Load() + p.n)
	}
	q.head.Store(h + 1)
	return p, true
}

// enter claims the side of q that sending (or receiving) is, for one call.
// gRPC allows one goroutine at a time on each side of a stream; a second
// one is refused, so that the mistake fails the stream instead of
// corrupting it.
func (q *queue) enter(sending bool) bool {
	if sending {
		return q.sending.CompareAndSwap(false, true)
	}
	return q.receiving.CompareAndSwap(false, true)
}

func (q *queue) leave(sending bool) {
	if sending {
		q.sending.Store(false)
	} else {
		q.receiving.Store(false)
	}
}

// parker lets one goroutine sleep until another makes progress.
type parker struct {
	parked atomic.Bool
	_      [cacheLine - 1]byte
	wake   chan struct{}
}

func (p *parker) init() { p.wake = make(chan struct{}, 1) }

// park sleeps until woken, unless q already satisfies n or also, when not
// nil, holds. It returns false if w's call ended; whoever ends it kicks
// every parker of the stream, so one channel is all a parked side waits on.
func (p *parker) park(q *queue, n need, also func() bool, w ender) bool {
	p.parked.Store(true)
	// Announce, then look again: the other side either sees the flag or
	// made its progress before this second look.
	if q.satisfies(n) || also != nil && also() {
		p.parked.Store(false)
		return true
	}
	if w.ended() {
		p.parked.Store(false)
		return false
	}
	<-p.wake
	// What the other side gave before the call ended is still taken.
	return q.satisfies(n) || !w.ended()
}

// An ender is a side of a call that may end while it waits.
type ender interface {
	ended() bool
}

// kick wakes the goroutine parked on p, or the next one to park, because
// its call may have ended.
func (p *parker) kick() {
	p.parked.Store(false)
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// unpark wakes the goroutine parked on p, if there is one.
func (p *parker) unpark() {
	if p.parked.Load() && p.parked.CompareAndSwap(true, false) {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}
