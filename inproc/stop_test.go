package inproc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// stopLimit bounds how long Stop may take to end a call in flight.
const stopLimit = time.Second

// receiveWithin is receive with a bound of d.
func receiveWithin[T any](t *testing.T, c <-chan T, d time.Duration, what string) T {
	t.Helper()
	return servertest.ReceiveWithin(t, c, d, what)
}

// TestStopEndsInFlightCalls checks that Stop ends calls in flight, of
// every kind: the client gets Unavailable or Canceled, and a handler that
// watches its context sees it end. With Isolated execution, the client
// returns even if its handler ignores its context.
func TestStopEndsInFlightCalls(t *testing.T) {
	cases := []struct {
		name         string
		isolatedOnly bool
		ignoresCtx   bool
		okAfterStop  bool // the handler returns OK once its context ends
	}{
		{"handler-watches-context", false, false, false},
		{"handler-ignores-context", true, true, false},
		// Over a socket, Stop closes the connection: the client gets
		// Unavailable whatever the handler does next.
		{"handler-returns-ok-after-stop", false, false, true},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, tc := range cases {
			for _, kind := range echoKinds {
				t.Run(tc.name+"/"+kind.name, func(t *testing.T) {
					if tc.isolatedOnly && !isIsolated(t, m) {
						t.Skip("with Inline execution cancellation is cooperative by design")
					}
					started := make(chan struct{}, 1)
					ended := make(chan error, 1) // the handler's ctx.Err()
					returned := make(chan struct{}, 1)
					release := make(chan struct{})
					c, ch := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
						defer func() { returned <- struct{}{} }()
						started <- struct{}{}
						if tc.ignoresCtx {
							<-release
							return nil
						}
						select {
						case <-ctx.Done():
						case <-release:
						}
						ended <- ctx.Err()
						if tc.okAfterStop {
							return nil
						}
						return ctx.Err()
					}))
					t.Cleanup(func() {
						close(release)
						receive(t, returned, "the handler to return")
					})
					res := async(func() error { return kind.call(timeoutCtx(t), c) })
					receive(t, started, "the handler to start")
					ch.Stop()
					if !tc.ignoresCtx {
						if err := receiveWithin(t, ended, stopLimit, "the handler's context to end after Stop"); err == nil {
							t.Error("the handler's context did not end")
						}
					}
					wantCode(t, "in-flight call", receiveWithin(t, res, stopLimit, "the client to return after Stop"), codes.Unavailable, codes.Canceled)
					wantCode(t, "new call", kind.call(timeoutCtx(t), c), codes.Unavailable)
				})
			}
		}
	})
}

// TestStopMidStream checks that Stop ends a bidirectional stream whose
// handler waits in Recv after a round trip: the client's Recv fails with
// Unavailable or Canceled.
func TestStopMidStream(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		c, ch := newEcho(t, m, &funcEcho{})
		s, err := c.Update(timeoutCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
			t.Fatal(err)
		}
		if r, err := s.Recv(); err != nil || r.GetText() != "x" {
			t.Fatalf("Recv = %v, %v; want x", r, err)
		}
		ch.Stop()
		res := async(func() error {
			_ = s.Send(&echov1.EchoRequest{Text: "y"}) // may fail or not; Recv tells
			_, err := s.Recv()
			return err
		})
		wantCode(t, "Recv after Stop", receiveWithin(t, res, stopLimit, "Recv after Stop"), codes.Unavailable, codes.Canceled)
	})
}

// TestGracefulStop checks that GracefulStop refuses new calls at once,
// waits for the calls in flight, lets them finish well, and then returns.
func TestGracefulStop(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, kind := range echoKinds {
			t.Run(kind.name, func(t *testing.T) {
				started := make(chan struct{}, 1)
				release := make(chan struct{})
				releaseOnce := sync1(release)
				t.Cleanup(releaseOnce)
				c, ch := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
					if md, _ := metadata.FromIncomingContext(ctx); len(md.Get("block")) > 0 {
						started <- struct{}{}
						<-release // ignores ctx
					}
					return nil
				}))
				inFlight := async(func() error {
					return kind.call(metadata.AppendToOutgoingContext(timeoutCtx(t), "block", "1"), c)
				})
				receive(t, started, "the in-flight handler to start")
				stopped := async(func() error { ch.GracefulStop(); return nil })
				quiet(t, stopped, "GracefulStop returning while a call is in flight")

				// New calls are refused once GracefulStop has begun: calls
				// that raced with its start may still go through.
				refused := false
				for deadline := time.Now().Add(waitLimit); !refused && time.Now().Before(deadline); {
					if err := kind.call(timeoutCtx(t), c); err != nil {
						if status.Code(err) != codes.Unavailable {
							t.Fatalf("new call during GracefulStop: %v, want Unavailable", err)
						}
						refused = true
					}
				}
				if !refused {
					t.Fatal("new calls still succeed during GracefulStop")
				}
				select {
				case <-inFlight:
					t.Fatal("the in-flight call ended before its handler returned")
				default:
				}

				releaseOnce()
				if err := receive(t, inFlight, "the in-flight call"); err != nil {
					t.Errorf("in-flight call during GracefulStop: %v, want success", err)
				}
				receive(t, stopped, "GracefulStop to return once the call finished")
				wantCode(t, "new call after GracefulStop", kind.call(timeoutCtx(t), c), codes.Unavailable)
			})
		}
	})
}

// TestSendAfterHandlerContextEnds checks, side by side with grpc-go over a
// connection, that a handler's Send fails once its context ended because
// the client cancelled or the server stopped, so that nothing it sends
// then reaches the client; and that a client's Send after Stop never
// reaches the handler. (After a cancel it may, with grpc-go too: the
// message can leave before the cancel does.) Isolated only: an Inline
// handler runs only while the client's calls resume it.
func TestSendAfterHandlerContextEnds(t *testing.T) {
	type result struct {
		sendErr error
		got     string // what the handler received after the end, if anything
	}
	handler := func(results chan<- result) *funcEcho {
		return &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			if _, err := s.Recv(); err != nil {
				return err
			}
			if err := s.Send(&echov1.EchoResponse{Text: "first"}); err != nil {
				return err
			}
			<-s.Context().Done()
			r := result{sendErr: s.Send(&echov1.EchoResponse{Text: "after the end"})}
			if m, err := s.Recv(); err == nil {
				r.got = m.GetText()
			}
			results <- r
			return nil
		}}
	}
	run := func(t *testing.T, c echov1.EchoClient, results chan result, stop bool, end func(cancel func())) {
		ctx, cancel := context.WithCancel(timeoutCtx(t))
		defer cancel()
		s, err := c.Update(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		end(cancel)
		_ = s.Send(&echov1.EchoRequest{Text: "sent after the end"})
		if m, err := s.Recv(); err == nil {
			t.Errorf("the client received %q after the end", m.GetText())
		}
		r := receive(t, results, "the handler's Send after the end")
		if r.sendErr == nil {
			t.Error("the handler's Send after its context ended succeeded")
		}
		if stop && r.got != "" {
			t.Errorf("the handler received %q sent after the end", r.got)
		}
	}
	t.Run("grpc-go/end=cancel", func(t *testing.T) {
		results := make(chan result, 1)
		cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, handler(results)) }, nil, nil)
		run(t, echov1.NewEchoClient(cc), results, false, func(cancel func()) { cancel() })
	})
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("an Inline handler runs only while the client's calls resume it")
		}
		for _, end := range []string{"cancel", "stop"} {
			t.Run("end="+end, func(t *testing.T) {
				results := make(chan result, 1)
				c, ch := newEcho(t, m, handler(results))
				run(t, c, results, end == "stop", func(cancel func()) {
					if end == "stop" {
						ch.Stop()
					} else {
						cancel()
					}
				})
			})
		}
	})
}

// TestHandlerAfterStopAsGRPC: what a handler's writes and reads return
// once its server stopped, side by side with grpc-go's Server.Stop over
// bufconn. grpc-go's Stop closes the connection (http2_server.go Close):
// a write (SendHeader, Send, one blocked in Send included) fails with
// Unavailable, as its transport reports a closed connection first
// (streamContextErr); a Recv fails with Canceled, its context's code; the
// handler's context ends with context.Canceled.
func TestHandlerAfterStopAsGRPC(t *testing.T) {
	for _, op := range servertest.EndedCalls {
		t.Run(op.Name, func(t *testing.T) {
			// tell makes the call on c, stops its server with stop once
			// the handler runs, and says what the handler reported.
			tell := func(t *testing.T, c echov1.EchoClient, started <-chan struct{}, reports <-chan servertest.EndReport, stop func()) string {
				var wg sync.WaitGroup
				t.Cleanup(wg.Wait)
				wg.Go(func() { op.Call(timeoutCtx(t), c) })
				receive(t, started, "the handler to run")
				stop()
				r := receiveWithin(t, reports, stopLimit, "the handler's report after the stop")
				return fmt.Sprintf("handler's %s: %v; its context: %v", op.Name, status.Code(r.Err), r.CtxErr)
			}
			started, reports := make(chan struct{}, 1), make(chan servertest.EndReport, 1)
			srv := servertest.EndedEcho{Started: started, Reports: reports}
			gs, cc := realGRPCServer(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, nil, nil)
			want := tell(t, echov1.NewEchoClient(cc), started, reports, gs.Stop)
			t.Logf("grpc-go: %s", want)
			forEachMode(t, func(t *testing.T, m testMode) {
				started, reports := make(chan struct{}, 1), make(chan servertest.EndReport, 1)
				c, ch := newEcho(t, m, servertest.EndedEcho{Started: started, Reports: reports})
				if got := tell(t, c, started, reports, ch.Stop); got != want {
					t.Errorf("inproc: %s\ngrpc-go: %s", got, want)
				}
			})
		})
	}
}

// stuckGet is an Echo whose Get runs until released, ignoring its
// context: a handler no drain can wait out.
type stuckGet struct {
	echov1.UnimplementedEchoServer
	started chan<- struct{}
	release <-chan struct{}
}

func (s stuckGet) Get(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	s.started <- struct{}{}
	<-s.release
	return &echov1.EchoResponse{}, nil
}

// TestStopCutsGracefulStop checks that Stop cuts short a GracefulStop
// waiting for a handler that ignores its context, as grpc.Server's Stop
// does: the caller gets its status at once, and GracefulStop returns once
// the handler has (grpc-go's stop waits for its handlers when graceful).
func TestStopCutsGracefulStop(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	returned := make(chan struct{})
	ch := inproc.New(inproc.WithExecution(inproc.Isolated))
	echov1.RegisterEchoServer(ch, stuckGet{started: started, release: release})
	call := async(func() error {
		defer close(returned)
		_, err := echov1.NewEchoClient(ch).Get(context.Background(), &echov1.EchoRequest{})
		return err
	})
	<-started
	graceful := make(chan struct{})
	go func() {
		defer close(graceful)
		ch.GracefulStop()
	}()
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		<-returned
	})
	ch.Stop()
	if err := receiveWithin(t, call, waitLimit, "the call to end after Stop"); status.Code(err) != codes.Unavailable {
		t.Errorf("the call in flight: %v, want Unavailable", err)
	}
	select {
	case <-graceful:
		t.Fatal("GracefulStop returned while the handler Stop cut short still ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	released = true
	receiveWithin(t, graceful, waitLimit, "GracefulStop to return once the handler did")
}
