package inproc_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// A client that cancels a server stream midway must hear Canceled, never
// io.EOF, which says it received everything: over a socket the cancel ends
// the stream. The handler here ignores its context while it sends, more
// than any flow control window holds, then waits for the end of the call,
// so that it cannot end well before the cancel. At one processor an Inline
// client that drives its handler used to receive all of it and then
// io.EOF, because the cancel's AfterFunc goroutine never ran while it
// drove; at two an Isolated one did the same, receiving what the handler
// queued while the AfterFunc waited to run. In-process the cancel, made
// on the client's goroutine, ends the stream at the client's next Recv:
// not one message more. grpc-go's Recv picks at random between the cancel
// and what its buffer holds, so a few may still come.
func TestCancelledStreamEndsCanceled(t *testing.T) {
	const total, cancelAfter, rounds = 2000, 10, 50
	text := strings.Repeat("x", 1024)
	srv := &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
		for range total {
			if err := s.Send(&echov1.EchoResponse{Text: text}); err != nil {
				return err
			}
		}
		<-s.Context().Done()
		return s.Context().Err()
	}}
	run := func(t *testing.T, c echov1.EchoClient, maxAfter int) {
		for procs := 1; procs <= 2; procs++ {
			prev := runtime.GOMAXPROCS(procs)
			for range rounds {
				n, err := cancelMidway(t, c, cancelAfter)
				if errors.Is(err, io.EOF) || status.Code(err) != codes.Canceled || n > maxAfter {
					runtime.GOMAXPROCS(prev)
					t.Fatalf("GOMAXPROCS %d: after cancelling at %d of %d responses, received %d more (at most %d), then %v; want Canceled", procs, cancelAfter, total, n, maxAfter, err)
				}
			}
			runtime.GOMAXPROCS(prev)
		}
	}
	t.Run("grpc", func(t *testing.T) {
		cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, nil, nil)
		run(t, echov1.NewEchoClient(cc), total)
	})
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		run(t, c, 0)
	})
}

// cancelMidway receives after responses, cancels, and receives until the
// stream ends; it returns how many came after the cancel and the error.
func cancelMidway(t *testing.T, c echov1.EchoClient, after int) (int, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(timeoutCtx(t))
	defer cancel()
	s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "x"})
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	for i := range after {
		if _, err := s.Recv(); err != nil {
			t.Fatalf("Recv %d before the cancel: %v", i, err)
		}
	}
	cancel()
	for n := 0; ; n++ {
		if _, err := s.Recv(); err != nil {
			return n, err
		}
	}
}

// An Inline handler runs on its caller's goroutine, so its panic reaches
// the caller, which may recover it, as net/http recovers every handler's.
// The call must still be counted out: GracefulStop used to wait for it
// for ever.
func TestGracefulStopAfterRecoveredInlinePanic(t *testing.T) {
	panicky := ctxHandlers(func(context.Context) error { panic("handler panics") })
	for _, m := range modes {
		if isIsolated(t, m) {
			continue // a handler's panic on its own goroutine ends the process, as with grpc.Server
		}
		for _, k := range echoKinds {
			t.Run(m.name+"/"+k.name, func(t *testing.T) {
				c, ch := newEcho(t, m, panicky)
				recovered := func() (v any) {
					defer func() { v = recover() }()
					_ = k.call(timeoutCtx(t), c)
					return nil
				}()
				if recovered != "handler panics" {
					t.Fatalf("the caller recovered %v, want the handler's panic", recovered)
				}
				stopped := make(chan struct{})
				go func() { ch.GracefulStop(); close(stopped) }()
				receive(t, stopped, "GracefulStop to return after the panicking call")
			})
		}
	}
}

// TestInlineUnaryPanicEndsInternal: an Inline unary handler panics and its
// caller recovers. grpc-go defines nothing here (the panic ends its
// process), but the Inline doc says the call still ends, with Internal:
// grpc.OnFinish and the client's stats End hear so, not of a call that
// ended well.
func TestInlineUnaryPanicEndsInternal(t *testing.T) {
	panicky := &funcEcho{get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		panic("handler panics")
	}}
	for _, m := range modes {
		if isIsolated(t, m) {
			continue // the panic ends the process, as with grpc.Server
		}
		t.Run(m.name, func(t *testing.T) {
			cs := newKindsRecorder()
			c, _ := newEcho(t, m, panicky, inproc.WithClientStatsHandler(cs))
			finished := make(chan error, 1)
			recovered := func() (v any) {
				defer func() { v = recover() }()
				_, _ = c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.OnFinish(func(err error) { finished <- err }))
				return nil
			}()
			if recovered != "handler panics" {
				t.Fatalf("recovered %v, want the handler's panic", recovered)
			}
			wantCode(t, "OnFinish of a call whose handler panicked", receive(t, finished, "OnFinish"), codes.Internal)
			receive(t, cs.ends, "the client's stats End")
			cs.mu.Lock()
			defer cs.mu.Unlock()
			for _, e := range cs.events {
				if end, ok := e.(*stats.End); ok {
					wantCode(t, "the client's stats End of a call whose handler panicked", end.Error, codes.Internal)
				}
			}
		})
	}
}
