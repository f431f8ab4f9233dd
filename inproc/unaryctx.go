package inproc

import (
	"context"
	"sync/atomic"
	"time"
)

// unaryContext is the parent of a unary handler's context. It ends with the
// client's context (Inline: it reads the client's; Isolated: the client
// ends it), at the client's deadline, with Stop, and when the call ends, as
// over a network. Most unary handlers never wait on their context, so the
// machinery to wait (a context.Context of the channel's, with its timer and
// registration) is made only on the first call of Done or AfterFunc.
type unaryContext struct {
	ch *Channel
	// client is the client's context with Inline execution, nil with
	// Isolated, where the handler outlives the client if it must.
	client      context.Context
	deadline    time.Time
	hasDeadline bool
	ended       atomic.Bool // the call ended for the handler, or Isolated's client left
	waiter      atomic.Pointer[ctxWaiter]
}

// ctxWaiter is what a handler that waits on its context waits on.
type ctxWaiter struct {
	ctx    context.Context
	cancel context.CancelFunc
	unlink func() bool // from the channel's context, with Inline
}

func (w *ctxWaiter) release() {
	if w.unlink != nil {
		w.unlink()
	}
	w.cancel()
}

func (c *unaryContext) init(ch *Channel, client context.Context, inline bool) {
	c.ch = ch
	if inline {
		c.client = client
	}
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
	if c.client != nil {
		if err := c.client.Err(); err != nil {
			return err
		}
	}
	if c.hasDeadline && !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	if c.ch.base.Err() != nil {
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
	case c.client != nil:
		w.ctx, w.cancel = context.WithCancel(detached{c.client})
		w.unlink = context.AfterFunc(c.ch.base, w.cancel)
	case c.hasDeadline:
		w.ctx, w.cancel = context.WithDeadline(c.ch.base, c.deadline)
	default:
		w.ctx, w.cancel = context.WithCancel(c.ch.base)
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
