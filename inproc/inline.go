package inproc

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localgrpc/localgrpc/internal/goroutine"
)

// inlineExecutor runs unary handlers on the caller's goroutine and stream
// handlers as coroutines (iter.Pull) that the client's calls drive: no
// goroutine hand-offs, no parking, a switch only when one side has nothing
// left to do. The client's calls resume the handler when they would wait;
// the handler suspends when it would wait. A client that uses a stream from
// two goroutines at once is served too: a call that cannot make progress
// itself parks until the other goroutine's call resumes the handler.
type inlineExecutor struct{}

func (*inlineExecutor) invoke(ctx context.Context, u *unaryCall) *unaryResult {
	u.uctx.init(&u.call, ctx, ctx)
	u.startServer(&u.uctx, false)
	returned := false
	defer func() {
		if !returned {
			u.finish(nil, errHandlerPanicked)
		}
		u.ch.end()
	}()
	resp, err := u.handle()
	returned = true
	u.finish(resp, err)
	if err := u.info.left(ctx); err != nil {
		// The client stopped waiting before the response: over a network
		// neither it nor the header or trailer would reach it.
		return &unaryResult{err: err, left: true}
	}
	return &u.result
}

func (*inlineExecutor) newStream() *stream {
	r := &inlineStream{}
	r.run.s = &r.stream
	r.stream.run = &r.run
	return &r.stream
}

// inlineStream is a stream and its runner in one allocation.
type inlineStream struct {
	stream
	run inlineRun
}

// inlineRun drives one stream's handler as a coroutine. drive is held
// while it runs; waitQueue and waitNeed say what it waits for when
// suspended.
type inlineRun struct {
	s           *stream
	drive       sync.Mutex
	resume      func() (struct{}, bool)
	stopHandler func()
	yield       func(struct{}) bool
	waitQueue   *queue
	waitNeed    need
	clientWants want
	started     bool
	coroutineG  uintptr      // the coroutine's goroutine, see onCoroutine
	waiters     atomic.Int32 // client goroutines waiting for the handler
	poked       atomic.Bool  // a goroutine found drive held; see tryDrive
	headerWait  parker       // where Header waits while another drives
}

func (r *inlineRun) start() {
	r.headerWait.init()
	r.resume, r.stopHandler = iter.Pull(r.coroutine)
}

// coroutine is the body of the handler's coroutine.
func (r *inlineRun) coroutine(yield func(struct{}) bool) {
	r.yield, r.started, r.coroutineG = yield, true, goroutine.Current()
	returned := false
	defer func() {
		if !returned {
			r.s.finishServer(errHandlerPanicked)
		}
	}()
	err := r.s.runHandler()
	returned = true
	r.s.finishServer(err)
}

// onCoroutine reports whether the handler's coroutine is the caller: a
// handler may also use its stream from goroutines it starts (one sending,
// one receiving), which must wait as Isolated handlers do, since only the
// coroutine can suspend itself.
func (r *inlineRun) onCoroutine() bool {
	return goroutine.Current() == r.coroutineG
}

func (r *inlineRun) clientWait(q *queue, n need, _ bool) bool {
	c := (*clientStream)(r.s)
	if c.ended() {
		// Checked here, not only where a parked client wakes: the
		// AfterFunc that ends the call at a cancel runs on a goroutine
		// that may not run while this one drives the handler (at one
		// processor, never), and the handler must not go on meanwhile.
		return false
	}
	if r.step(r.wantFor(q, n)) {
		return true
	}
	// The handler waits for what another goroutine of the client must give,
	// or another goroutine is running it: wait for either to make progress.
	r.waiters.Add(1)
	defer r.waiters.Add(-1)
	return q.parker(n).park(q, n, r.runnable, c)
}

func (r *inlineRun) handlerWait(q *queue, n need, _ bool) bool {
	if !r.onCoroutine() {
		// Another goroutine of the handler, which cannot suspend the
		// coroutine: park until the client acts.
		return q.parker(n).park(q, n, nil, (*serverStream)(r.s))
	}
	// Suspend until a client call finds q satisfies n and resumes us; false
	// means the call ended and the handler must return.
	r.waitQueue, r.waitNeed = q, n
	return r.yield(struct{}{})
}

// wantFor is what a client waiting on q for n wants.
func (r *inlineRun) wantFor(q *queue, n need) want {
	if q == &r.s.toClient && n == needMessage {
		return wantMessage
	}
	if q == &r.s.toServer && n == needRoom {
		return wantRoom
	}
	return wantProgress
}

// step resumes the handler if it can make progress, until it gives w or
// would wait, and reports whether it ran. It does not wait for a handler
// another goroutine is running.
func (r *inlineRun) step(w want) bool {
	if !r.tryDrive() {
		return false
	}
	defer r.letGo()
	if !r.canRun() {
		return false
	}
	r.waitQueue = nil
	r.clientWants = w
	r.resume()
	if r.waiters.Load() > 0 && r.canRun() {
		// The handler stopped where it could go on, having given what w
		// asked for: a goroutine that parked when it could not must look
		// again, or nothing resumes the handler for it.
		r.poked.Store(true)
	}
	return true
}

// tryDrive takes drive if no other goroutine holds it. If one does, it
// leaves a poke for that goroutine to act on when it lets go: what made
// this one try (input it gave, a wait it is about to begin) must not be
// lost because the other held drive only to look.
func (r *inlineRun) tryDrive() bool {
	if r.drive.TryLock() {
		return true
	}
	r.poked.Store(true)
	// The holder may have let go before the poke was there to see.
	return r.drive.TryLock()
}

// letGo releases drive and reports whether another goroutine poked
// meanwhile; then every waiting side of the client looks again, since the
// handler may be able to go on, or may have gone on.
func (r *inlineRun) letGo() bool {
	r.drive.Unlock()
	if !r.poked.Load() || !r.poked.Swap(false) {
		return false
	}
	r.s.toClient.receiver.unpark()
	r.s.toServer.sender.unpark()
	r.headerWait.unpark()
	return true
}

// handed suspends the handler if what it just gave, got, is what the
// client that resumed it wants. It returns false if the call ended while it
// was suspended.
func (r *inlineRun) handed(got want) bool {
	if got == wantRoom {
		// The client that waits for room sees it once the handler
		// shows what it received, before it leaves RecvMsg.
		q := &r.s.toServer
		q.publishHead()
		if !q.worthWaking(q.popped, q.recvdBytes) {
			return true // not room enough for a sender to be worth resuming
		}
	}
	if !r.onCoroutine() {
		return true // another goroutine of the handler: the client wakes on its own
	}
	w := r.clientWants
	if w != got && w != wantProgress && !(w == wantHeader && got == wantMessage) {
		return true
	}
	r.waitQueue = nil
	return r.yield(struct{}{})
}

// runnable reports whether step would resume the handler, or whether
// another goroutine poked while this one looked, so that it is worth
// looking again.
func (r *inlineRun) runnable() bool {
	if !r.tryDrive() {
		return false // the holder lets go with the poke tryDrive left
	}
	ok := r.canRun()
	return r.letGo() || ok
}

func (r *inlineRun) canRun() bool {
	return !r.s.handlerReturned.isRaised() && (r.waitQueue == nil || r.waitQueue.satisfies(r.waitNeed))
}

// fed resumes the handler after the client gave it input, if a goroutine
// of the client waits for it; otherwise the input waits until the client
// itself needs the handler, so that one switch serves many messages.
func (r *inlineRun) fed() {
	if r.waiters.Load() > 0 {
		r.step(wantProgress)
	}
}

// awaitHeader resumes the handler until it sends its header. While
// another of the client's goroutines drives it, this one parks on
// headerWait until that one lets go (see letGo) or the header comes.
func (r *inlineRun) awaitHeader() error {
	s := r.s
	// Waiting counts, so the client's other goroutine resumes the handler
	// when it gives input, if this one cannot.
	r.waiters.Add(1)
	defer r.waiters.Add(-1)
	p := &r.headerWait
	for !s.headerOut.isRaised() {
		if (*clientStream)(s).ended() {
			return nil // the caller's wait says why
		}
		if r.step(wantHeader) {
			continue
		}
		p.parked.Store(true)
		if s.headerOut.isRaised() || r.runnable() {
			p.parked.Store(false)
			continue
		}
		select {
		case <-p.wake:
		case <-s.headerOut.done():
			p.parked.Store(false)
		case <-s.clientCtx.Done():
			p.parked.Store(false)
			return s.clientGoneErr()
		case <-s.clientDone.done(): // its connection closed, say
			p.parked.Store(false)
			return nil // the caller's wait says why
		case <-s.ch.quit:
			p.parked.Store(false)
			return errStopped
		}
	}
	return nil
}

// refused drives the handler until it would wait on its stream, as a
// socket's server runs on beside a client that refused a message: a
// handler that returns at once sends its trailer. One that waits on
// something else (its context, say) gets, after refusedWait, what a
// socket's server gets once the client's reset came: its context ends,
// what it sends fails, and its trailer is lost.
func (r *inlineRun) refused() {
	s := r.s
	reset := time.AfterFunc(refusedWait, func() {
		s.resetByClient.Store(true)
		if s.cancel != nil {
			cancelForClient(s.clientCtx, s.cancel)
		}
	})
	r.step(wantProgress)
	reset.Stop()
}

// abandon ends a handler the client no longer waits for: its pending Send
// or Recv returns an error. A handler that never ran is finished here.
func (r *inlineRun) abandon() {
	r.drive.Lock()
	defer r.letGo()
	r.stopHandler()
	if !r.started {
		r.started = true
		r.s.finishServer(errClientGone)
	}
}
