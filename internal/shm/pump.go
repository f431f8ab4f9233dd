package shm

import (
	"context"
	"sync/atomic"
)

// pump lets the goroutines of a client's calls read the connection's
// ring themselves while they wait, rather than a reader goroutine that
// hands each frame to them: a goroutine woken by the netpoller that then
// wakes another wakes a second thread too, which between two processes on
// a small machine cost a unary call more than the rest of it together.
// One goroutine reads at a time, holding tok; the others wait for their
// frames, which it hands them, or for free, which says that tok was let
// go while they waited. Records that arrive while no call waits stay in
// the ring until one does; the socket's reader watches for the peer's
// end (see rings.watch).
type pump struct {
	tok     chan struct{} // holds a token while a goroutine reads
	free    chan struct{} // a token: tok was let go while some waited
	waiting atomic.Int32
	// interrupt ends the read of a goroutine whose context ended.
	interrupt func()
}

// pumpBatch bounds the records one taking of tok reads past the first.
const pumpBatch = 256

func newPump(interrupt func()) *pump {
	return &pump{tok: make(chan struct{}, 1), free: make(chan struct{}, 1), interrupt: interrupt}
}

// tryTake takes tok if nobody holds it.
func (p *pump) tryTake() bool {
	select {
	case p.tok <- struct{}{}:
		return true
	default:
		return false
	}
}

// release lets go of tok, and tells a waiting goroutine so.
func (p *pump) release() {
	<-p.tok
	if p.waiting.Load() > 0 {
		signal(p.free)
	}
}

// await waits until wake has a token, ctx ends or stop closes; on a
// connection with a pump it reads a record instead, if no other
// goroutine does. A nil error means: look again for what was awaited.
func (c *conn) await(ctx context.Context, stop <-chan struct{}, wake <-chan struct{}) error {
	p := c.pump
	var free chan struct{}
	if p != nil {
		if p.tryTake() {
			return c.pumpOnce(ctx, stop, wake)
		}
		// Counted before a last try: a reader letting go after the try
		// sees this waiter and tells it.
		p.waiting.Add(1)
		defer p.waiting.Add(-1)
		if p.tryTake() {
			return c.pumpOnce(ctx, stop, wake)
		}
		free = p.free
	}
	select {
	case <-wake:
	case <-free:
		// Told that tok was let go: this goroutine's frame may have come
		// meanwhile, and it may not read, while another waiter needs
		// someone to. It passes the word on while nobody holds tok (a
		// holder tells the waiters as it lets go).
		if p.waiting.Load() > 1 && len(p.tok) == 0 {
			signal(free)
		}
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return errStopped
	}
	return nil
}

// pumpOnce reads one record and hands its frames out, holding the pump's
// tok, which it lets go; a record for someone else still ends it, so that
// its caller looks again. It ends early when ctx ends or stop closes, and
// reads nothing if wake has a token: the reader before may have handed
// the caller its frames between its look and the taking of tok, and
// none may come after them.
func (c *conn) pumpOnce(ctx context.Context, stop, wake <-chan struct{}) error {
	defer c.pump.release()
	select {
	case <-wake:
		return nil // look again
	case <-c.failed:
		return nil // every stream has its end: look again
	case <-stop:
		return errStopped
	default:
	}
	var err error
	if ctx.Done() == nil { // a context that never ends: nothing to stop for
		err = c.rings.readOne(c, c.pumpOn)
	} else {
		unregister := context.AfterFunc(ctx, c.pump.interrupt)
		err = c.rings.readOne(c, c.pumpOn)
		unregister()
	}
	// What else arrived meanwhile goes out too, as a reader goroutine
	// would hand it on: a stream's records then cost one taking of tok.
	// A bound keeps a fast stream from holding its caller for long.
	for n := 0; err == nil && n < pumpBatch && c.rings.hasRecord(); n++ {
		err = c.rings.readOne(c, c.pumpOn)
	}
	if err != nil {
		c.fail(err)
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-stop:
		return errStopped
	default:
	}
	return nil
}

// pumpReady hands out the records that arrived while no call waited, if
// no goroutine reads: a new call then sees what the server said first (a
// GoAway, say).
func (c *conn) pumpReady() {
	p := c.pump
	// The ring is looked at only holding tok: the socket's reader holds
	// it for good before it unmaps the ring.
	if p == nil || !p.tryTake() {
		return
	}
	defer p.release()
	for c.rings.hasRecord() {
		select {
		case <-c.failed:
			return
		default:
		}
		if err := c.rings.readOne(c, c.pumpOn); err != nil {
			c.fail(err)
			return
		}
	}
}
