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
// not park and wake once per message.
//
// A second goroutine that sends (or receives) while another does is
// refused (see enterSend, enterReceive), so misuse cannot corrupt the
// ring. Each side's guard is the busy bit of its index word, tail or
// head, so that a message costs each side two locked operations: taking
// the guard, and storing the index, which lets the guard go. The byte
// counts are each side's own: the sender counts the bytes received from
// the sizes the slots keep (see recvdBefore).
type queue struct {
	// The sender's.
	tail    atomic.Uint64 // busy while a goroutine sends | messages pushed
	pending atomic.Uint64 // the size of the message a waiting sender holds
	closed  atomic.Bool   // the sender sent its last message
	// sentAtWait is sentBytes as the sender last waited for room, for the
	// receiver to tell whether it may go on (see worthWaking).
	sentAtWait atomic.Uint64
	sentBytes  uint64 // bytes pushed
	seenHead   uint64 // the sender's last look at head
	seenRecvd  uint64 // the bytes of the messages before seenHead
	_          [cacheLine]byte

	// The receiver's.
	head       atomic.Uint64 // busy while a goroutine receives | messages popped, as published
	popped     uint64        // messages popped, published in head as the receiver leaves
	recvdBytes uint64        // bytes popped
	seenTail   uint64        // the receiver's last look at tail
	// drained: the receiver found the queue closed and empty. It retires
	// the Spare as it leaves, once what it received went back to it.
	drained bool
	_       [cacheLine]byte

	receiver, sender parker

	// gone: the receiver takes no more messages. The receiver sets it
	// once, the sender reads it every push: kept off the line the
	// receiver writes every pop.
	gone atomic.Bool

	// slots keep each message's size after it was received, until the
	// sender pushes into the slot again: the sender reads it there.
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

// busy is the bit of tail (head) that a goroutine sending (receiving) holds.
const busy = 1 << 63

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
// receiver has popped head messages, of recvd bytes, and sent bytes were
// pushed.
func (q *queue) fits(tail, head, sent, recvd, n uint64) bool {
	if tail == head {
		return true
	}
	return tail-head < q.window && sent-recvd+n <= q.windowBytes
}

// recvdBefore returns, to the sender, the bytes of the messages before
// head, which is seenHead or later: their slots keep their sizes, which
// the sender wrote, until it pushes into them again, which it does only
// within a window of seenHead.
func (q *queue) recvdBefore(head uint64) uint64 {
	recvd := q.seenRecvd
	for i := q.seenHead; i != head; i++ {
		recvd += q.slots[i&q.mask].n
	}
	return recvd
}

// look has the sender look at the receiver's progress.
func (q *queue) look() {
	h := q.head.Load() &^ busy
	q.seenHead, q.seenRecvd = h, q.recvdBefore(h)
}

// satisfies reports whether the side that needs n can go on. For needRoom
// it reads the sender's own counts: the sender, or its runner while the
// sender is suspended, calls it.
func (q *queue) satisfies(n need) bool {
	if n == needRoom {
		h := q.head.Load() &^ busy
		return q.gone.Load() || q.fits(q.tail.Load()&^busy, h, q.sentBytes, q.recvdBefore(h), q.pending.Load())
	}
	return q.head.Load()&^busy != q.tail.Load()&^busy || q.closed.Load()
}

// worthWaking reports, to the receiver, that a parked sender should be
// woken: its message fits, and a quarter of the window is free or the
// queue is empty.
func (q *queue) worthWaking(head, recvd uint64) bool {
	tail, sent := q.tail.Load()&^busy, q.sentAtWait.Load()
	if tail == head {
		return true
	}
	if !q.fits(tail, head, sent, recvd, q.pending.Load()) {
		return false
	}
	inFlight := sent - recvd
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

// push adds v, of n bytes, waiting while the window is full, and lets go
// of the send guard, which the sender took at t (see enterSend). It
// returns false, without adding v, if the receiver is gone or w gave up.
func (q *queue) push(t uint64, v any, n uint64, w waiter) bool {
	if !q.fits(t, q.seenHead, q.sentBytes, q.seenRecvd, n) {
		q.look()
		if !q.fits(t, q.seenHead, q.sentBytes, q.seenRecvd, n) {
			q.sentAtWait.Store(q.sentBytes)
			q.pending.Store(n)
			if !q.wait(needRoom, w) {
				return false
			}
			q.look()
		}
	}
	if q.gone.Load() {
		return false
	}
	q.slots[t&q.mask] = parcel{v: v, n: n}
	q.sentBytes += n
	q.tail.Store(t + 1) // the message out, the guard let go
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
// closed and empty, or if w gave up waiting; then aborted is true. The
// sender sees the room it made once the receiver leaves (leaveReceive),
// or before it waits.
func (q *queue) pop(w waiter) (p parcel, ok, aborted bool) {
	h := q.popped
	if h == q.seenTail {
		q.publishHead()
		if !q.wait(needMessage, w) {
			return parcel{}, false, true
		}
		if q.seenTail = q.tail.Load() &^ busy; h == q.seenTail {
			q.drained = true
			return parcel{}, false, false // closed and drained
		}
	}
	return q.popAt(h), true, false
}

// popAt takes message h. The slot lets go of its message, so that a stream
// holds no more than its window of messages not yet received, and keeps
// its size, for the sender (see recvdBefore).
func (q *queue) popAt(h uint64) parcel {
	slot := &q.slots[h&q.mask]
	p := *slot
	slot.v = nil
	q.recvdBytes += p.n
	q.popped = h + 1
	return p
}

// publishHead shows the sender the messages popped, holding the receive
// guard, and wakes it if that made it room enough.
func (q *queue) publishHead() {
	if q.head.Load() != q.popped|busy {
		q.head.Store(q.popped | busy)
		q.wakeSender(q.popped, q.recvdBytes)
	}
}

// wakeSender wakes a parked sender if there is room enough for it, the
// receiver having popped head messages of recvd bytes. They are passed,
// not read: the receiver may have let go of its guard, and another
// goroutine may be receiving.
func (q *queue) wakeSender(head, recvd uint64) {
	if q.sender.parked.Load() && q.worthWaking(head, recvd) {
		q.sender.unpark()
	}
}

// retire gives the Spare's copies back, for other streams, once the
// receiver took the last message and gave its copy back (leaveReceive):
// the sender, which closed the queue, sends no more. The send guard keeps
// out a sender that would (a misuse), which then leaves the copies be.
func (q *queue) retire() {
	if t, ok := q.enterSend(); ok {
		q.spare.Retire()
		q.leaveSend(t)
	}
}

// take pops the next message without waiting, if one was pushed before
// tail stood at upTo.
func (q *queue) take(upTo uint64) (parcel, bool) {
	h := q.popped
	if h >= upTo || h >= q.tail.Load()&^busy {
		return parcel{}, false
	}
	return q.popAt(h), true
}

// enterSend claims the sending side of q, for one call, at the tail t it
// returns. gRPC allows one goroutine at a time on each side of a stream;
// a second one is refused, so that the mistake fails the stream instead
// of corrupting it.
func (q *queue) enterSend() (t uint64, ok bool) {
	t = q.tail.Load()
	return t, t&busy == 0 && q.tail.CompareAndSwap(t, t|busy)
}

// leaveSend lets go of the send guard taken at t, unless push did.
func (q *queue) leaveSend(t uint64) {
	if q.tail.Load() == t|busy {
		q.tail.Store(t)
	}
}

// enterReceive claims the receiving side of q, for one call, as enterSend
// the sending side.
func (q *queue) enterReceive() bool {
	h := q.head.Load()
	return h&busy == 0 && q.head.CompareAndSwap(h, h|busy)
}

// leaveReceive lets go of the receive guard, showing the sender the
// messages popped, and wakes it if that made it room enough.
func (q *queue) leaveReceive() {
	// Read before the guard is let go: from then on the fields are the
	// next receiver's.
	head, recvd, drained := q.popped, q.recvdBytes, q.drained
	q.head.Store(head)
	q.wakeSender(head, recvd)
	if drained {
		q.retire()
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
