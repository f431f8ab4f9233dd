package inproc

import (
	"runtime"
	"sync/atomic"
)

// queue carries the messages of one direction of one stream: a bounded ring
// with one sender and one receiver at a time, as gRPC allows, so neither
// side takes a lock. A side that finds nothing to do spins briefly when
// another processor may be about to act, then parks until the other side
// wakes it. The receiver wakes a parked sender only once a quarter of the
// window is free, as HTTP/2 sends window updates in steps, so a fast sender
// does not park and wake once per message.
type queue struct {
	tail   atomic.Uint64 // written by the sender
	closed atomic.Bool   // the sender sent its last message
	gone   atomic.Bool   // the receiver takes no more messages
	_      [cacheLine - 10]byte

	head atomic.Uint64 // written by the receiver
	_    [cacheLine - 8]byte

	receiver, sender parker

	slots     []any
	window    uint64
	threshold uint64 // free slots at which a parked sender is woken
	spins     int
}

const cacheLine = 64

// maxSpins is how many times a side looks again before parking, when
// another processor may be running the other side. Parking and waking a
// goroutine costs microseconds; a message arrives in tens of nanoseconds.
const maxSpins = 100

// init sizes the queue. spin says the two sides run on goroutines of their
// own, so that waiting for the other one may pay off.
func (q *queue) init(window int, spin bool) {
	q.window = uint64(window)
	q.slots = make([]any, window)
	q.threshold = max(q.window/4, 1)
	q.receiver.init()
	q.sender.init()
	if spin && runtime.GOMAXPROCS(0) > 1 {
		q.spins = maxSpins
	}
}

// A waiter is how one side of a stream waits for the other: it returns
// once ready() holds or p is woken, or false if the call ended first.
type waiter interface {
	block(p *parker, ready func() bool) bool
}

// push adds m, waiting while the window is full. It returns false, without
// adding m, if the receiver is gone or w gave up.
func (q *queue) push(m any, w waiter) bool {
	t := q.tail.Load()
	hasRoom := func() bool { return t-q.head.Load() < q.window || q.gone.Load() }
	for i := 0; !hasRoom(); i++ {
		if i >= q.spins && !w.block(&q.sender, hasRoom) {
			return false
		}
	}
	if q.gone.Load() {
		return false
	}
	q.slots[t%q.window] = m
	q.tail.Store(t + 1)
	q.receiver.unpark()
	return true
}

// close tells the receiver that nothing follows what was pushed.
func (q *queue) close() {
	q.closed.Store(true)
	q.receiver.unpark()
}

// abandon tells the sender that nothing more will be taken.
func (q *queue) abandon() {
	q.gone.Store(true)
	q.sender.unpark()
}

// pop takes the next message. ok is false if the queue is closed and
// empty, or if w gave up waiting; then aborted is true.
func (q *queue) pop(w waiter) (m any, ok, aborted bool) {
	h := q.head.Load()
	ready := func() bool { return h != q.tail.Load() || q.closed.Load() }
	for i := 0; !ready(); i++ {
		if i >= q.spins && !w.block(&q.receiver, ready) {
			return nil, false, true
		}
	}
	if h == q.tail.Load() {
		return nil, false, false // closed and drained
	}
	slot := &q.slots[h%q.window]
	m, *slot = *slot, nil
	q.head.Store(h + 1)
	if q.tail.Load()-h-1 <= q.window-q.threshold {
		q.sender.unpark()
	}
	return m, true, false
}

// parker lets one goroutine sleep until another makes progress.
type parker struct {
	parked atomic.Bool
	_      [cacheLine - 1]byte
	wake   chan struct{}
}

func (p *parker) init() { p.wake = make(chan struct{}, 1) }

// park sleeps until woken, unless ready says there is no need. It returns
// false if a or b closes first; a nil channel never does.
func (p *parker) park(ready func() bool, a, b <-chan struct{}) bool {
	p.parked.Store(true)
	// Announce, then look again: the other side either sees the flag or
	// made its progress before this second look.
	if ready() {
		p.parked.Store(false)
		return true
	}
	select {
	case <-p.wake:
		return true
	case <-a:
		return false
	case <-b:
		return false
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
