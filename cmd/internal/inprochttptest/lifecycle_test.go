package inprochttptest

import (
	"context"
	"errors"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"go.uber.org/goleak"
)

// A blocking call sends text to the probe, which blocks, and returns the
// call's error once it ends.
type blockingCall struct {
	name      string
	streaming bool // gRPC-Web clients do not stream requests
	run       func(ctx context.Context, c echov1connect.EchoClient, text string) error
}

var blockingCalls = []blockingCall{
	{"unary", false, func(ctx context.Context, c echov1connect.EchoClient, text string) error {
		_, err := c.Get(ctx, connect.NewRequest(&echov1.EchoRequest{Text: text}))
		return err
	}},
	{"server-stream", false, func(ctx context.Context, c echov1connect.EchoClient, text string) error {
		s, err := c.Expand(ctx, connect.NewRequest(&echov1.EchoRequest{Text: text}))
		if err != nil {
			return err
		}
		defer s.Close()
		for s.Receive() {
		}
		return s.Err()
	}},
	{"client-stream", true, func(ctx context.Context, c echov1connect.EchoClient, _ string) error {
		s := c.Collect(ctx)
		if err := s.Send(&echov1.EchoRequest{Text: "block"}); err != nil {
			return err
		}
		_, err := s.CloseAndReceive()
		return err
	}},
	{"bidi", true, func(ctx context.Context, c echov1connect.EchoClient, _ string) error {
		s := c.Update(ctx)
		defer s.CloseResponse()
		if err := s.Send(&echov1.EchoRequest{Text: "block"}); err != nil {
			return err
		}
		_, err := s.Receive()
		return err
	}},
}

// forEachBlocking runs f for every protocol, blocking call and transport.
func forEachBlocking(t *testing.T, f func(t *testing.T, c echov1connect.EchoClient, p *probe, call blockingCall)) {
	for _, proto := range protocols {
		for _, call := range blockingCalls {
			if call.streaming && proto.name == "grpcweb" {
				continue
			}
			for _, tr := range transports {
				t.Run("protocol="+proto.name+"/call="+call.name+"/transport="+tr.name, func(t *testing.T) {
					p := newProbe()
					hc, base := tr.client(t, p)
					t.Cleanup(func() { close(p.release) }) // before the server's shutdown, which waits for it
					f(t, echov1connect.NewEchoClient(hc, base, proto.opts...), p, call)
				})
			}
		}
	}
}

// endsWithin waits for the call's error on done and the end of the
// handler's context on p, each within bound, and returns them.
func endsWithin(t *testing.T, done <-chan error, p *probe) (callErr, handlerErr error) {
	t.Helper()
	select {
	case callErr = <-done:
	case <-time.After(bound):
		t.Fatalf("the call did not return within %v", bound)
	}
	select {
	case handlerErr = <-p.ctxEnded:
	case <-time.After(bound):
		t.Fatalf("the handler's context did not end within %v", bound)
	}
	return callErr, handlerErr
}

// A client's deadline reaches the handler, in every protocol and kind of
// call: the call ends with DeadlineExceeded and the handler's context ends.
func TestDeadlineReachesHandler(t *testing.T) {
	forEachBlocking(t, func(t *testing.T, c echov1connect.EchoClient, p *probe, call blockingCall) {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- call.run(ctx, c, "block") }()
		err, handlerErr := endsWithin(t, done, p)
		if connect.CodeOf(err) != connect.CodeDeadlineExceeded {
			t.Errorf("the call ended with %v, want DeadlineExceeded", err)
		}
		if handlerErr == nil {
			t.Error("the handler's context ended with no error")
		}
	})
}

// A client that cancels returns at once, though the handler ignores its
// context, and the handler's context ends, in every protocol and kind of
// call.
func TestCancelReachesHandler(t *testing.T) {
	forEachBlocking(t, func(t *testing.T, c echov1connect.EchoClient, p *probe, call blockingCall) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- call.run(ctx, c, "block-ignore") }()
		select {
		case <-p.started:
		case <-time.After(bound):
			t.Fatal("the handler did not start")
		}
		cancel()
		err, handlerErr := endsWithin(t, done, p)
		if connect.CodeOf(err) != connect.CodeCanceled {
			t.Errorf("the call ended with %v, want Canceled", err)
		}
		if !errors.Is(handlerErr, context.Canceled) {
			t.Errorf("the handler's context ended with %v, want context.Canceled", handlerErr)
		}
	})
}

// Streams a client abandons, ending its context without closing them,
// leave no goroutine behind in-process: the handlers' contexts end and
// their reads and writes fail, with no server to stop. (Over a socket,
// net/http's HTTP/2 client leaves an abandoned bidi stream open, its
// handler waiting to receive, until the connection closes.)
func TestAbandonedStreams(t *testing.T) {
	for _, proto := range protocols {
		t.Run("protocol="+proto.name, func(t *testing.T) {
			hc, base := inprocClient(t, newProbe())
			c := echov1connect.NewEchoClient(hc, base, proto.opts...)
			ctx, cancel := context.WithCancel(t.Context())
			ss, err := c.Expand(ctx, connect.NewRequest(&echov1.EchoRequest{Text: "a b c d"}))
			if err != nil || !ss.Receive() {
				t.Fatalf("Expand: %v", err)
			}
			if proto.name != "grpcweb" {
				bs := c.Update(ctx)
				if err := bs.Send(&echov1.EchoRequest{Text: "p"}); err != nil {
					t.Fatal(err)
				}
				if _, err := bs.Receive(); err != nil {
					t.Fatal(err)
				}
				cs := c.Collect(ctx)
				if err := cs.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
					t.Fatal(err)
				}
			}
			cancel() // and nothing closed
			goleak.VerifyNone(t)
		})
	}
}
