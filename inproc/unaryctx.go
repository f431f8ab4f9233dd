package inproc

import (
	"context"
	"sync/atomic"
	"time"
)

// unaryContext is the parent of a unary handler's context. It ends with the
// client's context (where the handler runs on the client's goroutine, it
// follows the client's; otherwise the client ends it when it leaves), at
// the client's deadline, with Stop, with the close of the client's
// connection, and when the call ends, as over a network. Most unary
// handlers never wait on their context, so the machinery to wait (a
// context.Context of the channel's, with its timer and registration) is
// made only on the first call of Done or AfterFunc.
type unaryContext struct {
	call *call // whose channel and connection end it
	// follows is the context whose end ends this one at once: the
	// client's, or nil where the handler may outlive the client.
	follows     context.Context
	deadline    time.Time
	hasDeadline bool
	ended       atomic.Bool // the call ended for the handler, or Isolated's client left
	waiter      atomic.Pointer[ctxWaiter]
}

// ctxWaiter is what a handler that waits on its context waits on.
type ctxWaiter struct {
	ctx    context.Context
	cancel context.CancelFunc
	unlink func() bool // from the channel's context, when following another
	// unlinkConn unlinks it from the call's connection, if it has one.
	unlinkConn func() bool
}

func (w *ctxWaiter) release() {
	if w.unlink != nil {
		w.unlink()
	}
	if w.unlinkConn != nil {
		w.unlinkConn()
	}
	w.cancel()
}

// init makes the context of u from its client's context, following
// follows.
func (c *unaryContext) init(u *call, client, follows context.Context) {
	c.call, c.follows = u, follows
	c.deadline, c.hasDeadline = client.Deadline()
}

func (c *unaryContext) Deadline() (time.Time, bool) { return c.deadline, c.hasDeadline }
func (c *unaryContext) Value(any) any               { return nil }
func (c *unaryContext) Done() <-chan struct{}       { return c.wait().Done() }

func (c *unaryContext) AfterFunc(f func()) func() bool { return context.AfterFunc(c.wait(), f) }

func (c *unaryContext) Err() error {
	if c.ended.Load() {
		return context.Canceled
	}
	if c.follows != nil {
		if err := c.follows.Err(); err != nil {
			return err
		}
	}
	if c.hasDeadline && !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	if c.call.ch.base.Err() != nil {
		return context.Canceled
	}
	if c.call.info.connClosed() {
		return context.Canceled
	}
	return nil
}

func (c *unaryContext) wait() context.Context {
	if w := c.waiter.Load(); w != nil {
		return w.ctx
	}
	w := &ctxWaiter{}
	switch {
	case c.follows != nil:
		w.ctx, w.cancel = context.WithCancel(detached{c.follows})
		w.unlink = context.AfterFunc(c.call.ch.base, w.cancel)
	case c.hasDeadline:
		w.ctx, w.cancel = context.WithDeadline(c.call.ch.base, c.deadline)
	default:
		w.ctx, w.cancel = context.WithCancel(c.call.ch.base)
	}
	if closed := c.call.info.client.closed; closed != nil {
		w.unlinkConn = context.AfterFunc(closed, w.cancel)
	}
	if !c.waiter.CompareAndSwap(nil, w) {
		w.release() // another goroutine of the handler made one first
		return c.waiter.Load().ctx
	}
	if c.ended.Load() {
		w.release() // the call ended while w was made
	}
	return w.ctx
}

// end cancels the context. It stores before it loads, as wait does, so
// that one of the two sees the other.
func (c *unaryContext) end() {
	c.ended.Store(true)
	if w := c.waiter.Load(); w != nil {
		w.release()
	}
}
