package bench

import (
	"context"
	"errors"
	"io"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// directClients is impl "direct", no channel at all: the workloads call
// the handlers as plain methods, with no client, no stream machinery and no
// second goroutine.
//
//   - ListStrings runs List with a stream whose Send is the workload's
//     callback (pushList).
//   - Unary calls Get.
//   - PingPong runs Update once per round with a stream that holds one
//     request: Recv returns it, then io.EOF, and Send hands the response
//     back. A stream the handler keeps across rounds would need a
//     goroutine or a coroutine, which are chan and iter.
//
// The streams embed nil gRPC stream interfaces as chanClients explains.
func directClients(_ testing.TB, srv servers) (clients, error) {
	return clients{
		pushList: func(ctx context.Context, req *listv1.ListRequest, send func(*listv1.ListResponse) error) error {
			return srv.list.List(req, &pushStream{ctx: ctx, send: send})
		},
		get:    directEcho{srv.echo},
		update: directEcho{srv.echo},
	}, nil
}

// pushStream is the handler's side of a direct List call.
type pushStream struct {
	grpc.ServerStream
	ctx  context.Context
	send func(*listv1.ListResponse) error
}

func (s *pushStream) Context() context.Context          { return s.ctx }
func (s *pushStream) Send(m *listv1.ListResponse) error { return s.send(m) }

// directEcho calls an EchoServer's methods directly.
type directEcho struct{ srv echov1.EchoServer }

func (c directEcho) Get(ctx context.Context, in *echov1.EchoRequest, _ ...grpc.CallOption) (*echov1.EchoResponse, error) {
	return c.srv.Get(ctx, in)
}

func (c directEcho) Update(ctx context.Context, _ ...grpc.CallOption) (grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse], error) {
	s := &directBidi{srv: c.srv, ctx: ctx}
	s.server.s = s
	return s, nil
}

// directBidi is the client's side of a directEcho stream: Send stores the
// request and Recv runs the handler on it.
type directBidi struct {
	grpc.ClientStream
	srv        echov1.EchoServer
	ctx        context.Context
	req        *echov1.EchoRequest // the round's request, until the handler takes it
	resp       *echov1.EchoResponse
	sendClosed bool
	server     directBidiServer
}

func (s *directBidi) Context() context.Context { return s.ctx }

func (s *directBidi) Send(m *echov1.EchoRequest) error {
	if s.sendClosed {
		return errSendClosed
	}
	if s.req != nil {
		return errors.New("direct: a second Send before Recv")
	}
	s.req = m
	return nil
}

func (s *directBidi) CloseSend() error {
	s.sendClosed = true
	return nil
}

// Recv runs one round of the handler: it returns when the handler has
// taken the request, answered and seen io.EOF.
func (s *directBidi) Recv() (*echov1.EchoResponse, error) {
	if s.req == nil {
		return nil, io.EOF // nothing more was sent: the stream is over
	}
	s.resp = nil
	if err := s.srv.Update(&s.server); err != nil {
		return nil, err
	}
	if s.resp == nil {
		return nil, errors.New("direct: the handler sent no response")
	}
	return s.resp, nil
}

// directBidiServer is the handler's side of one directEcho round.
type directBidiServer struct {
	grpc.ServerStream
	s *directBidi
}

func (h *directBidiServer) Context() context.Context { return h.s.ctx }

func (h *directBidiServer) Recv() (*echov1.EchoRequest, error) {
	m := h.s.req
	if m == nil {
		return nil, io.EOF
	}
	h.s.req = nil
	return m, nil
}

func (h *directBidiServer) Send(m *echov1.EchoResponse) error {
	h.s.resp = m
	return nil
}
