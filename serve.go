package localgrpc

import (
	"context"
	"errors"
	"fmt"
	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Serve serves every address bound by [Server.Listen] and
// [Server.AddListener], and those bound while it serves.
// It serves until ctx ends, [Server.Stop] is called, or
// [Server.GracefulStop]'s drain ends.
// When ctx ends, the server stops as Stop does, cutting short a drain in
// progress.
// Serve returns nil once the server has stopped.
// If a listener failed, Serve stops the server and returns that listener's
// error.
//
// A Server serves once, and Serve refuses to start with nothing to serve.
// Called after a stop, Serve returns an error wrapping
// grpc.ErrServerStopped, as grpc.Server's does.
// Code that may stop the server before Serve runs (go srv.Serve(ctx), then
// srv.Stop()) checks for it with errors.Is.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.phase >= draining:
		s.mu.Unlock()
		return stoppedError("Serve")
	case s.phase == serving:
		s.mu.Unlock()
		return errors.New("localgrpc: Serve was already called on this Server")
	case len(s.listeners) == 0:
		s.mu.Unlock()
		return errors.New("localgrpc: Serve has nothing to serve: call Listen or AddListener first")
	}
	s.phase = serving
	close(s.started)
	for _, l := range s.listeners {
		s.serve(l)
	}
	s.mu.Unlock()

	var err error
	select {
	case <-ctx.Done():
		s.Stop()
	case <-s.done:
	case err = <-s.failed:
		s.Stop()
	}
	<-s.done
	s.serving.Wait()
	return err
}

// ListenAndServe listens on addrs as [Server.Listen] does, then serves as
// [Server.Serve] does.
// Use Listen and Serve to learn the addresses (with [Server.Addrs]) before
// serving.
func (s *Server) ListenAndServe(ctx context.Context, addrs ...string) error {
	if err := s.Listen(addrs...); err != nil {
		return err
	}
	return s.Serve(ctx)
}

// serve has grpc-go serve l. s.mu is held.
func (s *Server) serve(l *listener) {
	if l.net == nil {
		return // in-process calls wait only for started
	}
	if l.addr.Kind == Shm {
		s.serving.Go(func() { s.serveShm(l) })
		return
	}
	s.serving.Go(func() {
		if err := s.grpc.Serve(l.net); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			select {
			case s.failed <- fmt.Errorf("localgrpc: serving %s: %w", l, err):
			default:
			}
		}
	})
}

// takesCalls reports whether s serves and is not stopping: a call to it
// need not wait. started is read first: closed by a stop before Serve, it
// follows stopping's store.
func (s *Server) takesCalls() bool {
	if s == nil {
		return false
	}
	select {
	case <-s.started:
		return !s.stopping.Load()
	default:
		return false
	}
}

// awaitServe waits until the server serves, or stops, as a socket client
// waits for the server to accept its connection: a call made between
// Listen and Serve proceeds once Serve is called, or ends with ctx or
// when closing is closed (its connection closed).
func (s *Server) awaitServe(ctx context.Context, closing <-chan struct{}) error {
	select {
	case <-s.started:
		return s.servedErr()
	default:
	}
	select {
	case <-s.started:
		return s.servedErr()
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	case <-closing:
		return errConnClosing
	}
}

// servedErr is why a call that waited for Serve fails: the server stopped
// before it served.
func (s *Server) servedErr() error {
	if s.neverServed.Load() {
		return errNeverServed
	}
	return nil
}

var errNeverServed = status.Error(codes.Unavailable, "localgrpc: the server stopped before it served")

func stoppedError(op string) error {
	return fmt.Errorf("localgrpc: %s: %w", op, grpc.ErrServerStopped)
}

// Stop stops the server at once:
//   - Listeners close.
//   - Socket files are removed.
//   - Calls in flight end with Unavailable or Canceled.
//   - Their handlers' contexts are cancelled, on every transport.
//   - A handler's Send or SendHeader then fails with Unavailable, as over a
//     connection that closed.
//     Its Recv fails with Canceled.
//
// Stop does not wait for handlers to return.
// It does wait for those of sockets when grpc.WaitForHandlers(true) was
// given through [WithGRPCServerOptions].
//
// Stop cuts short a GracefulStop in progress, as grpc.Server's Stop does.
// That GracefulStop returns once the handlers still running have returned.
// Handlers that honour their context return at once.
func (s *Server) Stop() { s.stop(false) }

// GracefulStop stops taking calls, waits for the calls in flight to end,
// then stops the server as Stop does.
// Stop, or the end of Serve's context, cuts the wait short.
func (s *Server) GracefulStop() { s.stop(true) }

func (s *Server) stop(graceful bool) {
	s.mu.Lock()
	prev := s.phase
	if prev == stopped || prev == draining && graceful {
		s.mu.Unlock()
		<-s.done
		return
	}
	if graceful {
		s.phase = draining
	} else {
		s.phase = stopped
	}
	s.stopping.Store(true)
	if prev < draining {
		if prev == listening {
			// Waiting in-process calls wake and fail, as socket clients of a
			// server that never accepted them do.
			s.neverServed.Store(true)
			close(s.started)
		}
		// inproc names go first, so that no new NewClient finds a stopping
		// server; shm: sockets take no new client, as grpc-go's close
		// theirs.
		for _, l := range s.listeners {
			if l.net == nil || l.addr.Kind == Shm {
				l.close(s)
			}
		}
	}
	s.mu.Unlock()
	if prev < draining && s.health != nil {
		s.health.Shutdown()
	}
	if graceful {
		// In-process calls are refused at once; a shm: connection's calls
		// come in until its client heard of the drain, as a socket's
		// streams sent before a GOAWAY reach grpc-go's handlers.
		inprocconn.Drain(s.channel)
		s.shm.stop(true)
		var wg sync.WaitGroup
		wg.Go(s.grpc.GracefulStop)
		wg.Go(func() {
			s.shm.wait()
			s.channel.GracefulStop()
		})
		wg.Wait()
	} else {
		// With a drain in progress (prev == draining), this ends it; the
		// GracefulStop that began it returns once grpc-go's handlers have.
		s.grpc.Stop()
		s.channel.Stop()
		s.shm.stop(false)
	}
	s.finish()
}

// finish releases every address and marks the server stopped, once: the
// first of Stop and a GracefulStop it cut short to get there.
func (s *Server) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	s.phase = stopped
	for _, l := range s.listeners {
		l.close(s)
	}
	s.listeners = nil
	close(s.done)
}
