package bench

import (
	"context"
	"errors"
	"io"
	"iter"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// iterClients is impl "iter": hand-written clients that run the handler as a
// coroutine with iter.Pull2, option 5 of Płotka and Petkovski, "Optimizing
// in-process gRPC with Go 1.23 Iterators and Coroutines"
// (https://www.bwplotka.dev/2025/go-grpc-inprocess-iter/) and its
// newServerAsClient/yielder pattern. Only stream methods exist (see impls);
// the streams embed nil gRPC stream interfaces as chanClients explains.
func iterClients(_ testing.TB, srv servers) (clients, error) {
	return clients{list: iterList{srv.list}, update: iterEcho{srv.echo}}, nil
}

// errStopped is what a handler's Send returns once the client stopped
// pulling.
var errStopped = errors.New("iterator stopped receiving")

// iterList is that text's serverAsClient: a
// listv1.ListStringsClient whose calls pull the handler's Sends.
type iterList struct{ srv listv1.ListStringsServer }

func (c iterList) List(ctx context.Context, in *listv1.ListRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
	return pull(ctx, func(s grpc.ServerStreamingServer[listv1.ListResponse]) error { return c.srv.List(in, s) }), nil
}

// pull runs handler as a coroutine and returns the client's side of its
// stream, whose Recv resumes it until its next Send.
func pull[Resp any](ctx context.Context, handler func(grpc.ServerStreamingServer[Resp]) error) grpc.ServerStreamingClient[Resp] {
	y := &yielder[Resp]{ctx: ctx}
	y.server.y = y
	y.recv, y.stop = iter.Pull2(func(yield func(*Resp, error) bool) {
		y.send = yield
		if err := handler(&y.server); err != nil {
			yield(nil, err)
		}
	})
	return y
}

// yielder is the client's side of a pulled call.
type yielder[Resp any] struct {
	grpc.ClientStream
	ctx    context.Context
	send   func(*Resp, error) bool // the coroutine's yield
	recv   func() (*Resp, error, bool)
	stop   func()
	server yielderServer[Resp]
}

func (y *yielder[Resp]) Context() context.Context { return y.ctx }

// Recv resumes the handler until its next Send, or its end.
func (y *yielder[Resp]) Recv() (*Resp, error) {
	r, err, ok := y.recv()
	if err != nil {
		y.stop()
		return nil, err
	}
	if !ok {
		return nil, io.EOF
	}
	return r, nil
}

// yielderServer is the handler's side of a pulled call.
type yielderServer[Resp any] struct {
	grpc.ServerStream
	y *yielder[Resp]
}

func (h *yielderServer[Resp]) Context() context.Context { return h.y.ctx }

// Send suspends the handler and hands m to the client's Recv.
func (h *yielderServer[Resp]) Send(m *Resp) error {
	if !h.y.send(m, nil) {
		return errStopped
	}
	return nil
}

// iterEcho is a bidiClient whose Update stream runs the handler as a
// coroutine. It is half duplex: the handler runs only inside the client's
// Recv, and a handler that waits for a request the client has not sent
// gets errWouldBlock instead of a deadlock. Strict ping-pong — Send, then
// Recv — is exactly what it can do.
type iterEcho struct{ srv echov1.EchoServer }

// errWouldBlock is what the handler's Recv returns when the client waits
// in Recv for a reply to a request it has not sent.
var errWouldBlock = errors.New("iter: the handler waits for a request the client has not sent")

func (c iterEcho) Update(ctx context.Context, _ ...grpc.CallOption) (grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse], error) {
	s := &iterBidi{ctx: ctx}
	s.server.s = s
	s.next, s.stop = iter.Pull2(func(yield func(*echov1.EchoResponse, error) bool) {
		s.yield = yield
		if err := c.srv.Update(&s.server); err != nil {
			yield(nil, err)
		}
	})
	return s, nil
}

// iterBidi is the client's side of an iterEcho stream. Send leaves the
// request in pending, where the handler's Recv takes it.
type iterBidi struct {
	grpc.ClientStream
	ctx        context.Context
	pending    *echov1.EchoRequest
	sendClosed bool
	yield      func(*echov1.EchoResponse, error) bool
	next       func() (*echov1.EchoResponse, error, bool)
	stop       func()
	server     iterBidiServer
}

func (s *iterBidi) Context() context.Context { return s.ctx }

func (s *iterBidi) Send(m *echov1.EchoRequest) error {
	switch {
	case s.sendClosed:
		return errSendClosed
	case s.pending != nil:
		// A network would buffer it; a coroutine that has not run cannot.
		return errors.New("iter: a second Send before Recv")
	}
	s.pending = m
	return nil
}

func (s *iterBidi) CloseSend() error {
	s.sendClosed = true
	return nil
}

// Recv resumes the handler until its next Send, or its end.
func (s *iterBidi) Recv() (*echov1.EchoResponse, error) {
	r, err, ok := s.next()
	if err != nil {
		s.stop()
		return nil, err
	}
	if !ok {
		return nil, io.EOF
	}
	return r, nil
}

// iterBidiServer is the handler's side of an iterEcho stream.
type iterBidiServer struct {
	grpc.ServerStream
	s *iterBidi
}

func (h *iterBidiServer) Context() context.Context { return h.s.ctx }

func (h *iterBidiServer) Recv() (*echov1.EchoRequest, error) {
	if m := h.s.pending; m != nil {
		h.s.pending = nil
		return m, nil
	}
	if h.s.sendClosed {
		return nil, io.EOF
	}
	return nil, errWouldBlock
}

func (h *iterBidiServer) Send(m *echov1.EchoResponse) error {
	if !h.s.yield(m, nil) {
		return errStopped
	}
	return nil
}
