package inproc

import "google.golang.org/grpc/codes"
import "google.golang.org/grpc/status"

// Inline streams run their handler as a coroutine (iter.Pull): no
// goroutine hand-offs, no parking, a switch only when one side has nothing
// left to do. The client's calls resume the handler when they would wait;
// the handler suspends when it would wait. A client that uses a stream from
// two goroutines at once is served too: a call that cannot make progress
// itself parks until the other goroutine's call resumes the handler.

// coroutine is the body of an inline stream's handler.
func (s *stream) coroutine(yield func(struct{}) bool) {
	s.yield, s.started = yield, true
	s.finishServer(s.runHandler())
	s.handlerEnd = true
}

// step resumes the handler if it can make progress, and reports whether it
// did. It does not wait for a handler another goroutine is running.
func (s *stream) step() bool {
	if !s.drive.TryLock() {
		return false
	}
	defer s.drive.Unlock()
	if !s.canRun() {
		return false
	}
	s.waitQueue = nil
	s.resume()
	return true
}

// runnable reports whether step would resume the handler.
func (s *stream) runnable() bool {
	if !s.drive.TryLock() {
		return false
	}
	defer s.drive.Unlock()
	return s.canRun()
}

func (s *stream) canRun() bool {
	return !s.handlerEnd && (s.waitQueue == nil || s.waitQueue.satisfies(s.waitNeed))
}

// wakeHandler resumes the handler after the client gave it input, if a
// goroutine of the client waits for it; otherwise the input waits until the
// client itself needs the handler, so that one switch serves many messages.
func (s *stream) wakeHandler() {
	if s.inline && s.waiters.Load() > 0 {
		s.step()
	}
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
	defer s.drive.Unlock()
	s.stopHandler()
	if !s.started {
		s.started = true
		s.finishServer(status.Error(codes.Canceled, "inproc: the client is gone"))
	}
}
