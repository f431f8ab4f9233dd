package inproc

import (
	"context"
	"runtime"
	"time"

	"google.golang.org/grpc/status"
)

// isolatedExecutor runs each handler on a goroutine of its own, which the
// client waits for by parking: the client can leave at any time, as over
// a socket.
type isolatedExecutor struct{}

func (*isolatedExecutor) invoke(ctx context.Context, u *unaryCall) *unaryResult {
	// The handler's context does not follow the client's: the client ends
	// it when it leaves (see cancelForClient), and the handler may outlive
	// the client.
	u.uctx.init(&u.call, ctx, nil)
	u.startServer(&u.uctx, false)
	return u.runIsolated(ctx)
}

func (*isolatedExecutor) newStream() *stream {
	r := &isolatedStream{}
	r.run.s = &r.stream
	r.stream.run = &r.run
	return &r.stream
}

// isolatedStream is a stream and its runner in one allocation.
type isolatedStream struct {
	stream
	run isolatedRun
}

type isolatedRun struct{ s *stream }

func (r *isolatedRun) start() { go r.s.serve() }

func (r *isolatedRun) clientWait(q *queue, n need, first bool) bool {
	return parkFor(q, n, first, (*clientStream)(r.s))
}

func (r *isolatedRun) handlerWait(q *queue, n need, first bool) bool {
	return parkFor(q, n, first, (*serverStream)(r.s))
}

func (r *isolatedRun) handed(want) bool   { return true }
func (r *isolatedRun) fed()               {}
func (r *isolatedRun) awaitHeader() error { return nil }
func (r *isolatedRun) abandon()           {}

// refused lets a handler that is about to return do so before its client
// leaves: over a socket its trailer, written at once, most often reaches
// the client before the client's reset reaches it. It waits, for
// refusedWait at most, until the handler's status is out or the handler
// waits on its stream.
func (r *isolatedRun) refused() {
	s := r.s
	deadline := time.Now().Add(refusedWait)
	for pause := time.Duration(0); !s.statusOut.isRaised() && !s.toClient.sender.parked.Load() && !s.toServer.receiver.parked.Load() && time.Now().Before(deadline); pause = min(2*pause+time.Microsecond, 500*time.Microsecond) {
		if pause < 8*time.Microsecond {
			runtime.Gosched()
		} else {
			time.Sleep(pause)
		}
	}
}

// refusedWait bounds how long a refusing client lets its handler run.
const refusedWait = 10 * time.Millisecond

// parkFor waits until q may satisfy n, or w's call ended.
//
// A side that finds nothing to do yields once before it parks: the other
// side most often waits to run on this processor, woken by this side's
// last step, and yielding lets it make its progress without either side
// parking and being woken, which costs more than a yield. Spinning was
// measured instead and lost, twice, on 2 cores: two sides on two
// processors pass every message between their caches, and a side that
// spins holds the processor the other was woken onto (ping-pong took 2.8
// times as long with 1 µs of spinning; a stream gained nothing).
func parkFor(q *queue, n need, first bool, w ender) bool {
	if first {
		runtime.Gosched()
		return true // the queue looks again
	}
	return q.parker(n).park(q, n, nil, w)
}

// handoff is how an Isolated handler's result reaches its client: through
// the call itself when the client looks after the handler returned, as it
// most often does (see runIsolated), and through handlerReturned's
// channel, which only a client that waits makes, otherwise.
type handoff struct {
	result unaryResult // the handler's, once handlerReturned is raised
	// handlerReturned is raised once the handler returned and result
	// holds what it gave, as a stream's is.
	handlerReturned signal
}

// runIsolated runs the handler on its own goroutine and waits for it, for
// the client's context to end, for its connection to close, or for Stop.
// The handler reads only what send made of the request, so the client may
// return at once.
func (u *unaryCall) runIsolated(ctx context.Context) *unaryResult {
	go u.serveIsolated()
	// The handler is next to run on this processor. Yielding to it first,
	// instead of parking at once, lets a handler that does not block
	// finish before the client looks: then the client takes its result
	// without a channel, without parking on three of them and without
	// being woken, which cost more than the go statement itself. A handler
	// that blocks leaves the client to the select, which waits as before.
	runtime.Gosched()
	if u.handlerReturned.isRaised() {
		return &u.result
	}
	select {
	case <-u.handlerReturned.done():
		return &u.result
	case <-ctx.Done():
		cancelForClient(ctx, u.uctx.end)
		return &unaryResult{err: status.FromContextError(ctx.Err()).Err(), left: true}
	case <-u.info.closing():
		u.uctx.end() // as the server of a closed connection does
		return &unaryResult{err: u.info.connErr(), left: true}
	case <-u.ch.quit:
		if u.handlerReturned.isRaised() {
			// The handler's end may be what stopped the channel, a
			// GracefulStop waiting for it; both were ready to select.
			return &u.result
		}
		return &unaryResult{err: errStopped, left: true}
	}
}

// serveIsolated runs the handler and hands its result over.
func (u *unaryCall) serveIsolated() {
	u.finish(u.handle())
	u.handlerReturned.raise() // after result: whoever sees it raised sees result
	u.ch.end()
}
