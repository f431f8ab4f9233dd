package inproc

import (
	"github.com/localgrpc/localgrpc/internal/goroutine"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Inline streams run their handler as a coroutine (iter.Pull): no
// goroutine hand-offs, no parking, a switch only when one side has nothing
// left to do. The client's calls resume the handler when they would wait;
// the handler suspends when it would wait. A client that uses a stream from
// two goroutines at once is served too: a call that cannot make progress
// itself parks until the other goroutine's call resumes the handler.

// coroutine is the body of an inline stream's handler.
func (s *stream) coroutine(yield func(struct{}) bool) {
	s.yield, s.started, s.coroutineG = yield, true, goroutine.Current()
	s.finishServer(s.runHandler())
	s.handlerEnd = true
}

// onCoroutine reports whether the handler's coroutine is the caller: a
// handler may also use its stream from goroutines it starts (one sending,
// one receiving), which must wait as Isolated handlers do, since only the
// coroutine can suspend itself.
func (s *stream) onCoroutine() bool {
	return goroutine.Current() == s.coroutineG
}

// want is what the client goroutine that resumed an inline handler waits
// for. The handler hands control back as soon as it has given that, not only
// when it would wait: a handler may next block on something other than the
// stream (a timer, an event channel), and the client must not wait for it
// with the message it asked for already queued.
type want uint8

const (
	wantProgress want = iota // anything: another of the client's goroutines waits
	wantMessage              // a message or the end, in toClient
	wantRoom                 // room in toServer
	wantHeader               // the header
)

// wantFor is what a client waiting on q for n wants.
func (s *stream) wantFor(q *queue, n need) want {
	if q == &s.toClient && n == needMessage {
		return wantMessage
	}
	if q == &s.toServer && n == needRoom {
		return wantRoom
	}
	return wantProgress
}

// step resumes the handler if it can make progress, until it gives w or
// would wait, and reports whether it ran. It does not wait for a handler
// another goroutine is running.
func (s *stream) step(w want) bool {
	if !s.tryDrive() {
		return false
	}
	defer s.letGo()
	if !s.canRun() {
		return false
	}
	s.waitQueue = nil
	s.clientWants = w
	s.resume()
	if s.waiters.Load() > 0 && s.canRun() {
		// The handler stopped where it could go on, having given what w
		// asked for: a goroutine that parked when it could not must look
		// again, or nothing resumes the handler for it.
		s.poked.Store(true)
	}
	return true
}

// tryDrive takes drive if no other goroutine holds it. If one does, it
// leaves a poke for that goroutine to act on when it lets go: what made
// this one try (input it gave, a wait it is about to begin) must not be
// lost because the other held drive only to look.
func (s *stream) tryDrive() bool {
	if s.drive.TryLock() {
		return true
	}
	s.poked.Store(true)
	// The holder may have let go before the poke was there to see.
	return s.drive.TryLock()
}

// letGo releases drive and reports whether another goroutine poked
// meanwhile; then every waiting side of the client looks again, since the
// handler may be able to go on, or may have gone on.
func (s *stream) letGo() bool {
	s.drive.Unlock()
	if !s.poked.Load() || !s.poked.Swap(false) {
		return false
	}
	s.toClient.receiver.unpark()
	s.toServer.sender.unpark()
	s.headerWait.unpark()
	return true
}

// handBack suspends the handler if what it just did, got, is what the
// client that resumed it wants. It returns false if the call ended while it
// was suspended.
func (ss *serverStream) handBack(got want) bool {
	if !(*stream)(ss).onCoroutine() {
		return true // another goroutine of the handler: the client wakes on its own
	}
	w := ss.clientWants
	if w != got && w != wantProgress && !(w == wantHeader && got == wantMessage) {
		return true
	}
	ss.waitQueue = nil
	return ss.yield(struct{}{})
}

// runnable reports whether step would resume the handler, or whether
// another goroutine poked while this one looked, so that it is worth
// looking again.
func (s *stream) runnable() bool {
	if !s.tryDrive() {
		return false // the holder lets go with the poke tryDrive left
	}
	ok := s.canRun()
	return s.letGo() || ok
}

func (s *stream) canRun() bool {
	return !s.handlerEnd && (s.waitQueue == nil || s.waitQueue.satisfies(s.waitNeed))
}

// wakeHandler resumes the handler after the client gave it input, if a
// goroutine of the client waits for it; otherwise the input waits until the
// client itself needs the handler, so that one switch serves many messages.
func (s *stream) wakeHandler() {
	if s.inline && s.waiters.Load() > 0 {
		s.step(wantProgress)
	}
}

// awaitHeaderInline resumes the handler until it sends its header. While
// another of the client's goroutines drives it, this one parks on
// headerWait until that one lets go (see letGo) or the header comes.
func (s *stream) awaitHeaderInline() error {
	// Waiting counts, so the client's other goroutine resumes the handler
	// when it gives input, if this one cannot.
	s.waiters.Add(1)
	defer s.waiters.Add(-1)
	p := &s.headerWait
	for !s.headerIsReady() {
		if s.step(wantHeader) {
			continue
		}
		p.parked.Store(true)
		if s.headerIsReady() || s.runnable() {
			p.parked.Store(false)
			continue
		}
		select {
		case <-p.wake:
		case <-s.headerReady:
			p.parked.Store(false)
		case <-s.clientCtx.Done():
			p.parked.Store(false)
			return s.clientGoneErr()
		case <-s.ch.quit:
			p.parked.Store(false)
			return errStopped
		}
	}
	return nil
}

func (s *stream) headerIsReady() bool {
	select {
	case <-s.headerReady:
		return true
	default:
		return false
	}
}

// stopCoroutine ends a handler the client no longer waits for: its pending
// Send or Recv returns an error. A handler that never ran is finished here.
func (s *stream) stopCoroutine() {
	s.drive.Lock()
	defer s.letGo()
	s.stopHandler()
	if !s.started {
		s.started = true
		s.finishServer(status.Error(codes.Canceled, "inproc: the client is gone"))
	}
}
