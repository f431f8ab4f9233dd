package localgrpc_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
	_ "unsafe"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// TestClientBeforeServer checks, side by side with an abstract socket,
// that a client of an address nothing serves yet is made at once, that
// its calls fail with Unavailable, or wait for a server with
// grpc.WaitForReady until their deadline, and that a call waiting when a
// server starts to serve the address goes through.
func TestClientBeforeServer(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + servertest.UniqueName()
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Fatalf("NewClient(%q) before any server: %v, want a client that connects when needed", addr, err)
			}
			t.Cleanup(func() { cc.Close() })
			c := echov1.NewEchoClient(cc)

			_, err = c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
			if status.Code(err) != codes.Unavailable {
				t.Errorf("a call with nothing serving %s: %v, want Unavailable", addr, err)
			}
			short, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			_, err = c.Get(short, &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
			if status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("a call that waits for ready with nothing serving %s: %v, want DeadlineExceeded", addr, err)
			}

			waiting := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
				waiting <- err
			}()
			time.Sleep(20 * time.Millisecond) // let it wait: it must go through whenever the server comes
			servertest.Serve(t, servertest.NewEchoServer(), addr)
			select {
			case err := <-waiting:
				if err != nil {
					t.Errorf("a call waiting for ready when a server came to %s: %v", addr, err)
				}
			case <-time.After(waitLimit):
				t.Fatalf("a call waiting for ready did not reach the server that came to %s", addr)
			}
			if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
				t.Errorf("a call once %s is served: %v", addr, err)
			}
		})
	}
}

// statsRecorder keeps what a client stats handler hears, and tells begun
// of each Begin: a call that has begun waits for a server.
type statsRecorder struct {
	mu     sync.Mutex
	tags   []stats.RPCTagInfo
	events []stats.RPCStats
	begun  chan struct{}
}

func newStatsRecorder() *statsRecorder { return &statsRecorder{begun: make(chan struct{}, 1)} }

func (r *statsRecorder) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tags = append(r.tags, *info)
	return ctx
}

func (r *statsRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
	if _, ok := s.(*stats.Begin); ok {
		select {
		case r.begun <- struct{}{}:
		default:
		}
	}
}

func (*statsRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*statsRecorder) HandleConn(context.Context, stats.ConnStats)                       {}

// forget forgets what r heard so far.
func (r *statsRecorder) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tags, r.events = nil, nil
	select {
	case <-r.begun:
	default:
	}
}

// heard returns what r heard so far.
func (r *statsRecorder) heard() ([]stats.RPCTagInfo, []stats.RPCStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tags), slices.Clone(r.events)
}

// kinds names the types of events.
func kinds(events []stats.RPCStats) []string {
	var names []string
	for _, e := range events {
		names = append(names, fmt.Sprintf("%T", e))
	}
	return names
}

// finishes keeps what a grpc.OnFinish option hears.
type finishes struct {
	mu   sync.Mutex
	errs []error
}

// option is the grpc.OnFinish option whose calls f keeps.
func (f *finishes) option() grpc.CallOption {
	return grpc.OnFinish(func(err error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.errs = append(f.errs, err)
	})
}

// forget forgets what f heard so far.
func (f *finishes) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = nil
}

// checkOnce checks that f heard one call end, with code want.
func (f *finishes) checkOnce(t *testing.T, want codes.Code) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.errs) != 1 || status.Code(f.errs[0]) != want {
		t.Errorf("OnFinish heard %v; want %v once", f.errs, want)
	}
}

// echoMethods are the full names of the methods of echoCalls and what
// kind of stream each is, by the call's name.
var echoMethods = map[string]struct {
	name                       string
	clientStream, serverStream bool
}{
	"unary":         {"/echo.v1.Echo/Get", false, false},
	"server-stream": {"/echo.v1.Echo/Expand", false, true},
	"client-stream": {"/echo.v1.Echo/Collect", true, false},
	"bidi":          {"/echo.v1.Echo/Update", true, true},
}

// checkBeganOnce checks that tags and events hold one call of the echo
// call named call, tagged and begun as a client that waits for ready if
// wfr: its Begin first, its End last. It returns them.
func checkBeganOnce(t *testing.T, call string, wfr bool, tags []stats.RPCTagInfo, events []stats.RPCStats) (*stats.Begin, *stats.End) {
	t.Helper()
	m := echoMethods[call]
	if len(tags) != 1 || tags[0].FullMethodName != m.name || tags[0].FailFast != !wfr {
		t.Errorf("TagRPC heard %+v; want once, for %s, FailFast %v", tags, m.name, !wfr)
	}
	if len(events) < 2 {
		t.Fatalf("the stats handler heard %v; want a Begin and an End", kinds(events))
	}
	b, okb := events[0].(*stats.Begin)
	e, oke := events[len(events)-1].(*stats.End)
	if !okb || !oke {
		t.Fatalf("the stats handler heard %T first and %T last; want a Begin and an End", events[0], events[len(events)-1])
	}
	want := stats.Begin{Client: true, BeginTime: b.BeginTime, FailFast: !wfr, IsClientStream: m.clientStream, IsServerStream: m.serverStream}
	if *b != want || b.BeginTime.IsZero() {
		t.Errorf("Begin: %+v; want %+v, at a time", *b, want)
	}
	if !e.Client || !e.BeginTime.Equal(b.BeginTime) || e.EndTime.Before(e.BeginTime) {
		t.Errorf("End: %+v; want Client, and BeginTime the Begin's (%v), EndTime not before it", *e, b.BeginTime)
	}
	for _, ev := range events[1 : len(events)-1] {
		switch ev.(type) {
		case *stats.Begin, *stats.End:
			t.Errorf("the stats handler heard a second %T: %v", ev, kinds(events))
		}
	}
	return b, e
}

// TestCallsNoServerTakes checks, side by side with a unix socket, what a
// client's stats handler and grpc.OnFinish hear of a call that no server
// takes, for every kind of call: as grpc-go's client begins a call before
// it waits for a connection, TagRPC and Begin (FailFast unless
// grpc.WaitForReady(true), IsClientStream and IsServerStream as the
// method's), then an End with the call's error and no trailer, whether
// nothing serves the address, its server stopped, or it listens but does
// not serve yet and the call's deadline or the connection's Close ends
// it. A call on a closed connection, or with a context that has ended, is
// not begun, whether or not a server serves the address: the handler
// hears nothing. OnFinish hears every call's error, once.
func TestCallsNoServerTakes(t *testing.T) {
	type setup int
	const (
		nothing   setup = iota // nothing serves the address
		stopped                // a server served it, and the client, then stopped
		listening              // a server listens on it and does not serve
		serving                // a server serves it, and the client used it
	)
	for _, sc := range []struct {
		name    string
		setup   setup
		wfr     bool
		ctx     func(t *testing.T) context.Context
		closeAt string // "before" the call, or "begun": once the call has begun
		want    codes.Code
		heard   bool
		extra   []grpc.CallOption // the client's default call options but WaitForReady's
	}{
		{"nothing-serves", nothing, false, timeoutCtx, "", codes.Unavailable, true, nil},
		{"nothing-serves/wait-for-ready/deadline", nothing, true, shortCtx, "", codes.DeadlineExceeded, true, nil},
		{"nothing-serves/wait-for-ready/close", nothing, true, timeoutCtx, "begun", codes.Canceled, true, nil},
		{"server-stopped", stopped, false, timeoutCtx, "", codes.Unavailable, true, nil},
		{"listens/deadline", listening, false, shortCtx, "", codes.DeadlineExceeded, true, nil},
		{"listens/close", listening, false, timeoutCtx, "begun", codes.Canceled, true, nil},
		{"listens/wait-for-ready/deadline", listening, true, shortCtx, "", codes.DeadlineExceeded, true, nil},
		{"listens/wait-for-ready/close", listening, true, timeoutCtx, "begun", codes.Canceled, true, nil},
		{"closed", nothing, false, timeoutCtx, "before", codes.Canceled, false, nil},
		{"context-ended", nothing, false, endedCtx, "", codes.Canceled, false, nil},
		{"serving/context-ended", serving, false, endedCtx, "", codes.Canceled, false, nil},
		// What a client refuses before it begins a call fails a call
		// that would wait, at once.
		{"nothing-serves/wait-for-ready/bad-metadata", nothing, true, badMetadataCtx, "", codes.Internal, false, nil},
		{"nothing-serves/wait-for-ready/unknown-compressor", nothing, true, timeoutCtx, "", codes.Internal, false, []grpc.CallOption{grpc.UseCompressor("localgrpc-test-no-such-compressor")}},
		{"listens/bad-metadata", listening, false, badMetadataCtx, "", codes.Internal, false, nil},
	} {
		for _, scheme := range []string{"unix", "inproc"} {
			for _, call := range echoCalls {
				t.Run(sc.name+"/"+scheme+"/"+call.Name, func(t *testing.T) {
					addr := "inproc:" + uniqueName(t)
					if scheme == "unix" {
						addr = "unix:" + socketPath(t)
					}
					rec, finished := newStatsRecorder(), &finishes{}
					opts := []localgrpc.ClientOption{localgrpc.WithClientStatsHandler(rec), localgrpc.WithDefaultCallOptions(finished.option())}
					if sc.wfr {
						opts = append(opts, localgrpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
					}
					opts = append(opts, localgrpc.WithDefaultCallOptions(sc.extra...))
					cc, err := localgrpc.NewClient(addr, opts...)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { cc.Close() })
					c := echov1.NewEchoClient(cc)
					// forget forgets the calls before the one that counts.
					forget := func() {
						rec.forget()
						finished.forget()
					}
					switch sc.setup {
					case stopped:
						srv := newEchoServer()
						if err := srv.Listen(addr); err != nil {
							t.Fatal(err)
						}
						served := make(chan error, 1)
						go func() { served <- srv.Serve(context.Background()) }()
						if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
							t.Fatal(err)
						}
						srv.Stop()
						receive(t, served, "Serve to return")
						// A socket client learns of the stop when its
						// connection closes; a call before that races the
						// close, and may reach the dying server. So may a
						// reconnection begun then, which the listener's
						// backlog can take before it closes: the client is
						// waited on until it is neither ready nor
						// connecting.
						if g, ok := cc.(*grpc.ClientConn); ok {
							ctx := timeoutCtx(t)
							for s := g.GetState(); s == connectivity.Ready || s == connectivity.Connecting; s = g.GetState() {
								if !g.WaitForStateChange(ctx, s) {
									t.Fatal("the socket client never saw its connection close")
								}
							}
						}
						forget() // only the call after the stop counts
					case listening:
						srv := newEchoServer()
						if err := srv.Listen(addr); err != nil {
							t.Fatal(err)
						}
						t.Cleanup(srv.Stop)
					case serving:
						serve(t, newEchoServer(), addr)
						// A client that reached the server calls it
						// directly from then on.
						if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
							t.Fatal(err)
						}
						forget()
					}
					if sc.closeAt == "before" {
						cc.Close()
					}
					got := make(chan error, 1)
					ctx := sc.ctx(t)
					var wg sync.WaitGroup
					wg.Go(func() {
						_, err := call.Call(ctx, c)
						got <- err
					})
					t.Cleanup(func() { cc.Close(); wg.Wait() })
					if sc.closeAt == "begun" {
						receive(t, rec.begun, "the call to begin")
						cc.Close()
					}
					err = receive(t, got, "the call to end")
					if status.Code(err) != sc.want {
						t.Errorf("the call: %v; want %v", err, sc.want)
					}
					finished.checkOnce(t, sc.want)
					tags, events := rec.heard()
					if !sc.heard {
						if len(tags) != 0 || len(events) != 0 {
							t.Errorf("the stats handler heard %v and %v; want nothing", tags, kinds(events))
						}
						return
					}
					_, end := checkBeganOnce(t, call.Name, sc.wfr, tags, events)
					if len(events) != 2 {
						t.Errorf("the stats handler heard %v; want a Begin and an End only", kinds(events))
					}
					if status.Code(end.Error) != sc.want || end.Trailer != nil {
						t.Errorf("End: error %v, trailer %v; want %v and no trailer", end.Error, end.Trailer, sc.want)
					}
				})
			}
		}
	}
}

// TestClientStatsOfCallThatWaitedForServer checks, side by side with a
// unix socket, what a client's stats handler hears of a call that waits
// for ready until a server serves its address: one TagRPC and one Begin
// as it begins to wait, DelayedPickComplete once a server takes it (see
// below for a socket's), then the call as any other, ending with one End
// whose BeginTime is the Begin's.
func TestClientStatsOfCallThatWaitedForServer(t *testing.T) {
	for _, listens := range []bool{false, true} {
		for _, scheme := range []string{"unix", "inproc"} {
			for _, call := range echoCalls {
				t.Run(fmt.Sprintf("listens=%v/%s/%s", listens, scheme, call.Name), func(t *testing.T) {
					addr := "inproc:" + uniqueName(t)
					if scheme == "unix" {
						addr = "unix:" + socketPath(t)
					}
					srv := newEchoServer()
					if listens {
						if err := srv.Listen(addr); err != nil {
							t.Fatal(err)
						}
					}
					rec := newStatsRecorder()
					c := dial(t, addr, localgrpc.WithClientStatsHandler(rec), localgrpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
					// timeoutCtx derives from t.Context(), which ends before
					// the cleanups run.
					got := callInBackground(t, timeoutCtx(t), c, call.Call)
					receive(t, rec.begun, "the call to begin")
					if listens {
						serve(t, srv)
					} else {
						serve(t, srv, addr)
					}
					if err := receive(t, got, "the call to end"); err != nil {
						t.Fatalf("the call: %v", err)
					}
					tags, events := rec.heard()
					_, end := checkBeganOnce(t, call.Name, true, tags, events)
					// A socket client whose connection to the new server
					// completes between the call's Begin and its pick,
					// which a busy machine may allow, does not wait, and
					// hears no DelayedPickComplete. An inproc: call that
					// found no server serving always waited.
					_, delayed := events[1].(*stats.DelayedPickComplete)
					if !delayed && scheme == "inproc" {
						t.Errorf("the stats handler heard %T after Begin; want DelayedPickComplete", events[1])
					}
					if end.Error != nil {
						t.Errorf("End: error %v; want none", end.Error)
					}
				})
			}
		}
	}
}

// cancelAtPick is a statsRecorder that cancels its call once a server
// takes it (DelayedPickComplete).
type cancelAtPick struct {
	*statsRecorder
	cancel context.CancelFunc
}

func (r cancelAtPick) HandleRPC(ctx context.Context, s stats.RPCStats) {
	r.statsRecorder.HandleRPC(ctx, s)
	if _, ok := s.(*stats.DelayedPickComplete); ok {
		r.cancel()
	}
}

// TestWaitedCallCancelledAsTaken: a call that waited for a server began
// as it began to wait, as grpc-go's client begins a call before it picks
// a connection; its context ends as a server takes it, before the
// channel would begin it. Its stats handler still hears it end, once,
// with Canceled, as grpc-go's ends every call it began (stream.go
// csAttempt.finish), and grpc.OnFinish hears it once. The handler cancels
// the call as it hears DelayedPickComplete, which a socket client does
// not always report (see TestClientStatsOfCallThatWaitedForServer): no
// side by side here.
func TestWaitedCallCancelledAsTaken(t *testing.T) {
	for _, call := range echoCalls {
		t.Run(call.Name, func(t *testing.T) {
			addr := "inproc:" + uniqueName(t)
			srv := newEchoServer()
			if err := srv.Listen(addr); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(timeoutCtx(t))
			rec, finished := newStatsRecorder(), &finishes{}
			c := dial(t, addr, localgrpc.WithClientStatsHandler(cancelAtPick{rec, cancel}),
				localgrpc.WithDefaultCallOptions(grpc.WaitForReady(true), finished.option()))
			got := callInBackground(t, ctx, c, call.Call)
			receive(t, rec.begun, "the call to begin")
			serve(t, srv)
			if err := receive(t, got, "the call to end"); status.Code(err) != codes.Canceled {
				t.Errorf("the call: %v; want Canceled", err)
			}
			tags, events := rec.heard()
			if _, end := checkBeganOnce(t, call.Name, true, tags, events); status.Code(end.Error) != codes.Canceled {
				t.Errorf("End: error %v; want Canceled", end.Error)
			}
			finished.checkOnce(t, codes.Canceled)
		})
	}
}

// callInBackground makes call on c with ctx on a goroutine the test's
// end waits for, and returns what the call returns.
func callInBackground(t *testing.T, ctx context.Context, c echov1.EchoClient, call func(context.Context, echov1.EchoClient) ([]string, error)) <-chan error {
	got := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := call(ctx, c)
		got <- err
	})
	t.Cleanup(wg.Wait)
	return got
}

// shortCtx ends soon: a call that waits ends with DeadlineExceeded.
func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

// badMetadataCtx carries outgoing metadata no transport can send: a key
// with a space in it.
func badMetadataCtx(t *testing.T) context.Context {
	return metadata.AppendToOutgoingContext(timeoutCtx(t), "bad key", "v")
}

// endedCtx has ended already.
func endedCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// noStats is a client stats handler that does nothing.
type noStats struct{}

func (noStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (noStats) HandleRPC(context.Context, stats.RPCStats)                         {}
func (noStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (noStats) HandleConn(context.Context, stats.ConnStats)                       {}

// BenchmarkInprocClientUnary is a unary call through NewClient("inproc:")
// to a server that serves, with and without a client stats handler and a
// client interceptor: what the connection adds to a call of its server's
// channel.
func BenchmarkInprocClientUnary(b *testing.B) {
	for _, withStats := range []bool{false, true} {
		for _, withInterceptor := range []bool{false, true} {
			b.Run(fmt.Sprintf("stats=%v/interceptor=%v", withStats, withInterceptor), func(b *testing.B) {
				addr := "inproc:" + servertest.UniqueName()
				servertest.Serve(b, newEchoServer(), addr)
				var opts []localgrpc.ClientOption
				if withStats {
					opts = append(opts, localgrpc.WithClientStatsHandler(noStats{}))
				}
				if withInterceptor {
					opts = append(opts, localgrpc.WithClientUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
						return inv(ctx, method, req, reply, cc, opts...)
					}))
				}
				cc, err := localgrpc.NewClient(addr, opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { cc.Close() })
				c := echov1.NewEchoClient(cc)
				ctx, req := context.Background(), &echov1.EchoRequest{Text: "x"}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.Get(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestWaitForReadyPassesOverServerThatNeverServed: a call that
// waits for ready follows the first Server that claims its name; if that
// one stops before it serves, the call fails Unavailable ("the server
// stopped before it served") instead of waiting on, as NewClient's doc
// says a waiting call does until its context ends, and as a socket client
// does: the next Server of the name, which comes at once, never gets it.
func TestWaitForReadyPassesOverServerThatNeverServed(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + uniqueName(t)
			c := dial(t, addr)
			waiting := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
				waiting <- err
			}()
			time.Sleep(50 * time.Millisecond) // the call waits for a server

			first := newEchoServer()
			if err := first.Listen(addr); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the call found it, waits for Serve
			first.Stop()

			serve(t, newEchoServer(), addr)
			select {
			case err := <-waiting:
				if err != nil {
					t.Errorf("a call waiting for ready on %s, when a server listened then stopped without serving and another then served: %v, want it served by the second", addr, err)
				}
			case <-time.After(waitLimit):
				t.Fatal("the waiting call never returned")
			}
		})
	}
}

// TestCloseEndsWaitingInprocCall: Close leaves a unary call
// that waits for ready waiting (until its context ends: a leak with no
// deadline), and the call then goes through on the closed connection once
// a server comes. A closed grpc.ClientConn ends such a call at once with
// Canceled.
func TestCloseEndsWaitingInprocCall(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + uniqueName(t)
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Fatal(err)
			}
			c := echov1.NewEchoClient(cc)
			waiting := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
				waiting <- err
			}()
			time.Sleep(50 * time.Millisecond)
			cc.Close()
			select {
			case err := <-waiting:
				if status.Code(err) != codes.Canceled {
					t.Errorf("a waiting call ended by Close: %v, want Canceled", err)
				}
				return
			case <-time.After(time.Second):
			}
			serve(t, newEchoServer(), addr)
			select {
			case err := <-waiting:
				t.Errorf("Close of the client of %s did not end a call waiting for ready (1s later it still waited); once a server came it returned %v, on a closed connection", addr, err)
			case <-time.After(waitLimit):
				t.Errorf("Close of the client of %s did not end a call waiting for ready", addr)
			}
		})
	}
}

// TestInprocClientMovesToSuccessorOfDrainingServer: a client keeps sending
// its calls to the Server it last reached while that one drains
// (GracefulStop waiting for a stream), though the drain released the name
// and another Server now serves it: every call fails Unavailable while a
// new client of the same name, or a socket client (which reconnects on
// GOAWAY), reaches the new Server.
func TestInprocClientMovesToSuccessorOfDrainingServer(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + uniqueName(t)
			old := newEchoServer()
			if err := old.Listen(addr); err != nil {
				t.Fatal(err)
			}
			oldDone := make(chan error, 1)
			go func() { oldDone <- old.Serve(context.Background()) }()
			t.Cleanup(func() { old.Stop(); <-oldDone })

			c := dial(t, addr)
			if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
				t.Fatal(err)
			}
			// A stream held open keeps the old server draining.
			holder := dial(t, addr)
			sctx, scancel := context.WithCancel(t.Context())
			defer scancel()
			st, err := holder.Update(sctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Send(&echov1.EchoRequest{Text: "p"}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Recv(); err != nil {
				t.Fatal(err)
			}
			go old.GracefulStop()
			deadline := time.Now().Add(waitLimit)
			var next *localgrpc.Server
			for {
				next = newEchoServer()
				if err := next.Listen(addr); err == nil {
					break
				}
				next.Stop()
				if time.Now().After(deadline) {
					t.Fatal("the name was never released")
				}
				time.Sleep(10 * time.Millisecond)
			}
			serve(t, next)

			// A fresh client reaches the new server.
			if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
				t.Fatalf("a new client of %s: %v", addr, err)
			}
			var err2 error
			for range 3 {
				if _, err2 = c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true)); err2 == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err2 != nil {
				t.Errorf("the old client of %s, while its server drains and another serves the name: %v (3 tries, waiting for ready), want the new server's answer", addr, err2)
			}
		})
	}
}
