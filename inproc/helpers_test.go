package inproc_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// testMode is the type of an entry of modes.
type testMode = struct {
	name string
	opts []inproc.Option
}

// waitLimit bounds every wait for something that must happen. It only
// matters when the behaviour under test is broken: the test then fails
// instead of hanging.
const waitLimit = 5 * time.Second

// quietWait is how long a test watches for something that must NOT happen
// (a blocked sender staying blocked, say).
const quietWait = 50 * time.Millisecond

// forEachMode runs f as a subtest for every entry of modes.
func forEachMode(t *testing.T, f func(t *testing.T, m testMode)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { f(t, m) })
	}
}

// isIsolated reports whether m runs handlers Isolated.
func isIsolated(t *testing.T, m testMode) bool {
	t.Helper()
	switch {
	case strings.Contains(m.name, "exec=isolated"):
		return true
	case strings.Contains(m.name, "exec=inline"):
		return false
	}
	t.Fatalf("mode %q names no execution", m.name)
	return false
}

// isShare reports whether m's channel copy mode is Share.
func isShare(t *testing.T, m testMode) bool {
	t.Helper()
	switch {
	case strings.Contains(m.name, "copy=share"):
		return true
	case strings.Contains(m.name, "copy=clone"):
		return false
	}
	t.Fatalf("mode %q names no copy mode", m.name)
	return false
}

// newChannel returns a Channel with m's options followed by extra, stopped
// when the test ends.
func newChannel(t *testing.T, m testMode, extra ...inproc.Option) *inproc.Channel {
	t.Helper()
	ch := inproc.New(append(slices.Clone(m.opts), extra...)...)
	t.Cleanup(ch.Stop)
	return ch
}

// newEcho returns an Echo client on a new Channel serving srv.
func newEcho(t *testing.T, m testMode, srv echov1.EchoServer, extra ...inproc.Option) (echov1.EchoClient, *inproc.Channel) {
	t.Helper()
	ch := newChannel(t, m, extra...)
	echov1.RegisterEchoServer(ch, srv)
	return echov1.NewEchoClient(ch), ch
}

// timeoutCtx is the test's context with a deadline of waitLimit, so a call
// that should have ended cannot hang the test.
func timeoutCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// receive returns the next value of c, failing the test if none comes
// within waitLimit.
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	return servertest.ReceiveWithin(t, c, waitLimit, what)
}

// quiet fails the test if c yields a value within quietWait.
func quiet[T any](t *testing.T, c <-chan T, what string) {
	t.Helper()
	select {
	case v := <-c:
		t.Fatalf("%s happened (%v), want it not to", what, v)
	case <-time.After(quietWait):
	}
}

// async runs f on a goroutine and returns a channel of its error.
func async(f func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return c
}

// wantCode fails the test unless err has one of the codes.
func wantCode(t *testing.T, what string, err error, want ...codes.Code) {
	t.Helper()
	got := status.Code(err)
	if !slices.Contains(want, got) {
		t.Errorf("%s: error %v has code %v, want one of %v", what, err, got, want)
	}
}

// funcEcho is an Echo server whose methods the test supplies; a nil
// function behaves as echo.Server.
type funcEcho struct {
	echov1.UnimplementedEchoServer
	get     func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error)
	expand  func(*echov1.EchoRequest, grpc.ServerStreamingServer[echov1.EchoResponse]) error
	collect func(grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error
	update  func(grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error
}

func (f *funcEcho) Get(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	if f.get == nil {
		return echo.Server{}.Get(ctx, req)
	}
	return f.get(ctx, req)
}

func (f *funcEcho) Expand(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
	if f.expand == nil {
		return echo.Server{}.Expand(req, s)
	}
	return f.expand(req, s)
}

func (f *funcEcho) Collect(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	if f.collect == nil {
		return echo.Server{}.Collect(s)
	}
	return f.collect(s)
}

func (f *funcEcho) Update(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	if f.update == nil {
		return echo.Server{}.Update(s)
	}
	return f.update(s)
}

// ctxHandlers returns a funcEcho whose four methods all call h with their
// context, once they have their first request (Get, Expand) or at once
// (Collect, Update), and return its error; Expand, Collect and Update
// then answer "ok".
func ctxHandlers(h func(ctx context.Context) error) *funcEcho {
	return &funcEcho{
		get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			if err := h(ctx); err != nil {
				return nil, err
			}
			return &echov1.EchoResponse{Text: "ok"}, nil
		},
		expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			if err := h(s.Context()); err != nil {
				return err
			}
			return s.Send(&echov1.EchoResponse{Text: "ok"})
		},
		collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			if err := h(s.Context()); err != nil {
				return err
			}
			return s.SendAndClose(&echov1.EchoResponse{Text: "ok"})
		},
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			if err := h(s.Context()); err != nil {
				return err
			}
			return s.Send(&echov1.EchoResponse{Text: "ok"})
		},
	}
}

// echoKind is one kind of method, as the Echo service has them, called
// with one request of text "hi" and expecting "ok" back (see ctxHandlers).
type echoKind struct {
	name string
	call func(ctx context.Context, c echov1.EchoClient, opts ...grpc.CallOption) error
}

var echoKinds = []echoKind{
	{"unary", func(ctx context.Context, c echov1.EchoClient, opts ...grpc.CallOption) error {
		_, err := c.Get(ctx, &echov1.EchoRequest{Text: "hi"}, opts...)
		return err
	}},
	{"server-stream", func(ctx context.Context, c echov1.EchoClient, opts ...grpc.CallOption) error {
		s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "hi"}, opts...)
		if err != nil {
			return err
		}
		_, err = echotest.RecvAll(s.Recv)
		return err
	}},
	{"client-stream", func(ctx context.Context, c echov1.EchoClient, opts ...grpc.CallOption) error {
		s, err := c.Collect(ctx, opts...)
		if err != nil {
			return err
		}
		if err := s.Send(&echov1.EchoRequest{Text: "hi"}); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		_, err = s.CloseAndRecv()
		return err
	}},
	{"bidi", func(ctx context.Context, c echov1.EchoClient, opts ...grpc.CallOption) error {
		s, err := c.Update(ctx, opts...)
		if err != nil {
			return err
		}
		if err := s.Send(&echov1.EchoRequest{Text: "hi"}); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		_, err = echotest.RecvAll(s.Recv)
		return err
	}},
}

// realGRPC serves register's services on a grpc.Server over bufconn and
// returns a connection to it, with the given server and dial options;
// both end with the test.
func realGRPC(t testing.TB, register func(grpc.ServiceRegistrar), sopts []grpc.ServerOption, dopts []grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	return servertest.GRPCOverBufconn(t, register, sopts, dopts...)
}

// realGRPCServer is realGRPC that returns the server too, for a test
// that stops it.
func realGRPCServer(t testing.TB, register func(grpc.ServiceRegistrar), sopts []grpc.ServerOption, dopts []grpc.DialOption) (*grpc.Server, *grpc.ClientConn) {
	t.Helper()
	return servertest.GRPCServerOverBufconn(t, register, sopts, dopts...)
}

// callOnce calls method on cc, as desc says (nil: a unary call), with one
// request, reads until the end, and returns how the call ended: nil if it
// ended well.
func callOnce(ctx context.Context, cc grpc.ClientConnInterface, desc *grpc.StreamDesc, method string) error {
	if desc == nil {
		return cc.Invoke(ctx, method, &echov1.EchoRequest{Text: "hi"}, &echov1.EchoResponse{})
	}
	s, err := cc.NewStream(ctx, desc, method)
	if err != nil {
		return err
	}
	if err := s.SendMsg(&echov1.EchoRequest{Text: "hi"}); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	for {
		if err := s.RecvMsg(&echov1.EchoResponse{}); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}
