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

// chanClients is impl "chan": hand-written clients that run the handler on a
// goroutine of its own and carry messages over unbuffered Go channels,
// option 4 of Płotka and Petkovski, "Optimizing in-process gRPC with Go 1.23
// Iterators and Coroutines"
// (https://www.bwplotka.dev/2025/go-grpc-inprocess-iter/). Only stream
// methods exist (see impls).
//
// Like that text's clients, the hand-written streams implement
// only what the workloads and handlers call: they embed a nil
// grpc.ClientStream or grpc.ServerStream, whose other methods panic.
func chanClients(_ testing.TB, srv servers) (clients, error) {
	return clients{list: chanList{srv.list}, update: chanEcho{srv.echo}}, nil
}

// chanList is a listv1.ListStringsClient that calls a ListStringsServer.
type chanList struct{ srv listv1.ListStringsServer }

func (c chanList) List(ctx context.Context, in *listv1.ListRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
	s := &chanListStream{ctx: ctx, msgs: make(chan *listv1.ListResponse)}
	s.server.s = s
	go func() {
		s.err = c.srv.List(in, &s.server)
		close(s.msgs) // publishes s.err to Recv
	}()
	return s, nil
}

// chanListStream is the client's side of a chanList call.
type chanListStream struct {
	grpc.ClientStream
	ctx    context.Context
	msgs   chan *listv1.ListResponse
	err    error          // the handler's result, set before msgs closes
	server chanListServer // the handler's side, kept here to save an allocation
}

func (s *chanListStream) Context() context.Context { return s.ctx }

// Recv returns the next message the handler sent, or its error, or io.EOF.
func (s *chanListStream) Recv() (*listv1.ListResponse, error) {
	if m, ok := <-s.msgs; ok {
		return m, nil
	}
	if s.err != nil {
		return nil, s.err
	}
	return nil, io.EOF
}

// chanListServer is the handler's side of a chanList call.
type chanListServer struct {
	grpc.ServerStream
	s *chanListStream
}

func (h *chanListServer) Context() context.Context { return h.s.ctx }

// Send waits for the client to take m. The context keeps the goroutine
// from leaking if the client goes away.
func (h *chanListServer) Send(m *listv1.ListResponse) error {
	select {
	case h.s.msgs <- m:
		return nil
	case <-h.s.ctx.Done():
		return h.s.ctx.Err()
	}
}

// chanEcho is a bidiClient that calls an EchoServer's Update.
type chanEcho struct{ srv echov1.EchoServer }

func (c chanEcho) Update(ctx context.Context, _ ...grpc.CallOption) (grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse], error) {
	s := &chanBidi{
		ctx:   ctx,
		reqs:  make(chan *echov1.EchoRequest),
		resps: make(chan *echov1.EchoResponse),
		done:  make(chan struct{}),
	}
	s.server.s = s
	go func() {
		s.err = c.srv.Update(&s.server)
		close(s.done) // publishes s.err to Recv
	}()
	return s, nil
}

// chanBidi is the client's side of a chanEcho stream: requests go over one
// channel, responses over another, and done closes when the handler
// returns.
type chanBidi struct {
	grpc.ClientStream
	ctx        context.Context
	reqs       chan *echov1.EchoRequest
	resps      chan *echov1.EchoResponse
	done       chan struct{}
	err        error // the handler's result, set before done closes
	sendClosed bool
	server     chanBidiServer
}

var errSendClosed = errors.New("send on a stream after CloseSend")

func (s *chanBidi) Context() context.Context { return s.ctx }

func (s *chanBidi) Send(m *echov1.EchoRequest) error {
	if s.sendClosed {
		return errSendClosed
	}
	select {
	case s.reqs <- m:
		return nil
	case <-s.done:
		return io.EOF // as in grpc-go: Recv returns the status
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

func (s *chanBidi) CloseSend() error {
	if !s.sendClosed {
		s.sendClosed = true
		close(s.reqs)
	}
	return nil
}

func (s *chanBidi) Recv() (*echov1.EchoResponse, error) {
	select {
	case m := <-s.resps:
		return m, nil
	case <-s.done:
		// resps is unbuffered, so nothing the handler sent is left behind.
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
}

// chanBidiServer is the handler's side of a chanEcho stream.
type chanBidiServer struct {
	grpc.ServerStream
	s *chanBidi
}

func (h *chanBidiServer) Context() context.Context { return h.s.ctx }

func (h *chanBidiServer) Recv() (*echov1.EchoRequest, error) {
	select {
	case m, ok := <-h.s.reqs:
		if !ok {
			return nil, io.EOF
		}
		return m, nil
	case <-h.s.ctx.Done():
		return nil, h.s.ctx.Err()
	}
}

func (h *chanBidiServer) Send(m *echov1.EchoResponse) error {
	select {
	case h.s.resps <- m:
		return nil
	case <-h.s.ctx.Done():
		return h.s.ctx.Err()
	}
}
