package fanout

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Why a proxy ends a backend call, as the cause of its context.
var (
	errFirstResponseTimeout = errors.New("no first response in time")
	errIdleTimeout          = errors.New("no response in time")
	errNotNeeded            = errors.New("the proxy no longer needs the call")
)

// call is the responses of one shard, then its error if it ends with one:
// it waits for a first response from a replica, hedging if asked, then
// relays that replica's stream.
func (c *core[Req, Resp]) call(parent context.Context, s *shard, req *Req) iter.Seq2[*Resp, error] {
	return func(yield func(*Resp, error) bool) {
		c.openShard(parent, s, req).relay(c, yield)
	}
}

// A shardCall is a shard's call once its first response, or its failure,
// is in.
type shardCall[Req, Resp any] struct {
	cancel    context.CancelCauseFunc
	a         *attempt[Resp] // the winner, or the last to fail
	endLosers func()
	done      bool
}

// openShard calls one replica of s, hedging if asked, and waits for the
// first response or the failure.
func (c *core[Req, Resp]) openShard(parent context.Context, s *shard, req *Req) *shardCall[Req, Resp] {
	ctx, cancel := context.WithCancelCause(parent)
	var timeout *time.Timer
	if c.cfg.firstTimeout > 0 {
		timeout = time.AfterFunc(c.cfg.firstTimeout, func() { cancel(errFirstResponseTimeout) })
	}
	a, endLosers := c.first(ctx, s, req)
	if timeout != nil {
		timeout.Stop()
	}
	return &shardCall[Req, Resp]{cancel: cancel, a: a, endLosers: endLosers}
}

// relay yields the shard's responses, then its error if it ends with
// one, and ends its calls.
func (sc *shardCall[Req, Resp]) relay(c *core[Req, Resp], yield func(*Resp, error) bool) {
	sc.done = true
	defer sc.cancel(nil)
	defer sc.endLosers()
	a := sc.a
	if a.err != nil && a.err != io.EOF {
		if err := c.end(a, a.err); err != nil {
			yield(nil, &BackendError{Backend: a.r.Name, Shard: a.r.Shard, Err: err})
		}
		return
	}
	c.relayAttempt(a, yield)
}

// close ends the calls of a shard whose responses were never asked for.
func (sc *shardCall[Req, Resp]) close(c *core[Req, Resp]) {
	if sc.done {
		return
	}
	sc.done = true
	c.end(sc.a, errNotNeeded)
	sc.endLosers()
	sc.cancel(nil)
}

// openAll opens the call of every shard at once, so that their waits for a
// first response overlap, as a sorted merge needs the first response of
// every shard before it yields anything; the merge then relays them.
func (c *core[Req, Resp]) openAll(ctx context.Context, req *Req) []*shardCall[Req, Resp] {
	calls := make([]*shardCall[Req, Resp], len(c.shards))
	var wg sync.WaitGroup
	for i, s := range c.shards {
		wg.Go(func() { calls[i] = c.openShard(ctx, s, req) })
	}
	wg.Wait()
	return calls
}

// An attempt is one backend call of a shard: the first, or a hedge.
type attempt[Resp any] struct {
	r      *replica
	ctx    context.Context
	cancel context.CancelCauseFunc
	recv   func() (*Resp, error)
	first  *Resp
	err    error // of the wait for the first response; io.EOF: none came
	stats  CallStats
}

func (c *core[Req, Resp]) newAttempt(ctx context.Context, r *replica, hedge bool) *attempt[Resp] {
	a := &attempt[Resp]{r: r, stats: CallStats{Backend: r.Name, Shard: r.Shard, Hedge: hedge, Begin: time.Now()}}
	a.ctx, a.cancel = context.WithCancelCause(ctx)
	r.calls.Add(1)
	if hedge {
		r.hedges.Add(1)
	}
	return a
}

// open starts a's call and waits for its first response.
func (c *core[Req, Resp]) open(a *attempt[Resp], req *Req, h *hedger) {
	if a.recv, a.err = c.start(a.ctx, a.r.Conn, req); a.err != nil {
		return
	}
	if a.first, a.err = a.recv(); a.err != nil {
		return
	}
	a.stats.FirstResponse = time.Since(a.stats.Begin)
	c.count(a, a.first)
	if h != nil {
		h.observe(a.stats.FirstResponse)
	}
}

func (c *core[Req, Resp]) count(a *attempt[Resp], resp *Resp) {
	a.stats.Messages++
	if c.size != nil {
		a.stats.Bytes += int64(c.size(resp))
	}
}

// first returns the attempt that answered first, or the last that failed,
// and a function that waits for the others, cancelled, to end. Without
// hedging it is the one call to the shard's next replica.
func (c *core[Req, Resp]) first(ctx context.Context, s *shard, req *Req) (*attempt[Resp], func()) {
	next := s.pick()
	h := s.hedge
	if h == nil {
		a := c.newAttempt(ctx, s.replicas[next], false)
		c.open(a, req, nil)
		return a, func() {}
	}
	h.called()
	results := make(chan *attempt[Resp], len(s.replicas))
	var started []*attempt[Resp]
	tried := make([]bool, len(s.replicas))
	launch := func(hedge bool) {
		i := next
		if hedge {
			i = s.hedgeTo(next, tried)
		}
		tried[i] = true
		a := c.newAttempt(ctx, s.replicas[i], hedge)
		started = append(started, a)
		go func() {
			c.open(a, req, h)
			results <- a
		}()
	}
	mayHedge := func() bool {
		return len(started) < len(s.replicas) && ctx.Err() == nil && h.allow()
	}
	launch(false)
	var tick <-chan time.Time
	delay, ok := h.after()
	if ok {
		t := time.NewTimer(delay)
		defer t.Stop()
		tick = t.C
	}
	var winner *attempt[Resp]
	for running := 1; running > 0; {
		select {
		case a := <-results:
			running--
			switch {
			case a.err == nil || a.err == io.EOF:
				winner = a
			case running > 0:
				c.end(a, a.err) // one of the others may answer
			case mayHedge():
				// A failure before the first response is hedged at once,
				// as gRFC A6 does.
				c.end(a, a.err)
				launch(true)
				running++
			default:
				winner = a // the last to fail is the shard's failure
			}
			if winner != nil {
				// Cancel the others; their ends are waited for once the
				// winner's stream is under way.
				for _, o := range started {
					if o != winner {
						o.cancel(errNotNeeded)
					}
				}
				return winner, func() {
					for range running {
						c.end(<-results, errNotNeeded)
					}
				}
			}
		case <-tick:
			tick = nil
			if mayHedge() {
				launch(true)
				running++
				if len(started) < len(s.replicas) {
					t := time.NewTimer(delay)
					defer t.Stop()
					tick = t.C
				}
			}
		}
	}
	panic("unreachable: the loop returns with its last result")
}

// relayAttempt yields a's responses, its first included, then its error
// if it ends with one, and ends it.
func (c *core[Req, Resp]) relayAttempt(a *attempt[Resp], yield func(*Resp, error) bool) {
	if a.err == io.EOF {
		c.end(a, nil)
		return
	}
	if !yield(a.first, nil) {
		c.end(a, errNotNeeded)
		return
	}
	a.first = nil
	// The idle timer runs while the backend, not the consumer, is the one
	// to act.
	var idle *time.Timer
	if d := c.cfg.idleTimeout; d > 0 {
		idle = time.AfterFunc(d, func() { a.cancel(errIdleTimeout) })
		defer idle.Stop()
	}
	for {
		resp, err := a.recv()
		if idle != nil {
			idle.Stop()
		}
		if err != nil {
			if err = c.end(a, err); err != nil {
				yield(nil, &BackendError{Backend: a.r.Name, Shard: a.r.Shard, Err: err})
			}
			return
		}
		c.count(a, resp)
		if !yield(resp, nil) {
			c.end(a, errNotNeeded)
			return
		}
		if idle != nil {
			idle.Reset(c.cfg.idleTimeout)
		}
	}
}

// end ends a, records its statistics, and returns the error to report:
// nil if it succeeded, DeadlineExceeded if a timeout gave up on it.
func (c *core[Req, Resp]) end(a *attempt[Resp], err error) error {
	cause := context.Cause(a.ctx)
	a.cancel(errNotNeeded)
	s := &a.stats
	s.Duration = time.Since(s.Begin)
	switch {
	case err == nil || err == io.EOF:
		err = nil
		s.Outcome = Succeeded
	case cause == errFirstResponseTimeout || cause == errIdleTimeout:
		err = status.Errorf(codes.DeadlineExceeded, "fanout: %v", cause)
		s.Outcome = Failed
	case err == errNotNeeded || cause != nil:
		s.Outcome = Cancelled
	default:
		s.Outcome = Failed
	}
	s.Err, s.Code = err, code(err)
	if err == errNotNeeded {
		s.Err, s.Code = status.Error(codes.Canceled, "fanout: "+errNotNeeded.Error()), codes.Canceled
	}
	a.r.record(s, c.cfg.cooldown)
	if c.cfg.handler != nil {
		c.cfg.handler(*s)
	}
	return err
}
