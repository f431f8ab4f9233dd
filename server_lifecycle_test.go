package localgrpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// TestClientSurvivesServerRestart: a client made for an address
// keeps working when the server at that address is replaced by a new one,
// as a grpc-go client of a socket reconnects. An inproc client stays bound
// to the Server it found at NewClient and fails forever.
func TestClientSurvivesServerRestart(t *testing.T) {
	for _, addr := range []string{"unix:" + socketPath(t), "unix:@" + uniqueName(t), "inproc:" + uniqueName(t), "shm:@" + uniqueName(t)} {
		t.Run(addr, func(t *testing.T) {
			first := newEchoServer()
			if err := first.Listen(addr); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- first.Serve(context.Background()) }()
			c := dial(t, addr)
			if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "1"}); err != nil {
				t.Fatal(err)
			}
			first.Stop()
			<-done
			serve(t, newEchoServer(), addr)
			var err error
			for range 50 { // a socket client may need a reconnect attempt
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				_, err = c.Get(ctx, &echov1.EchoRequest{Text: "2"}, grpc.WaitForReady(true))
				cancel()
				if err == nil {
					break
				}
			}
			if err != nil {
				t.Errorf("after the server at %s was replaced, the old client's call: %v; want it to reach the new server", addr, err)
			}
		})
	}
}

// TestClientCloseEndsCallsInFlight: grpc.ClientConn.Close ends every
// call in flight at once with Canceled ("grpc: the client connection is
// closing"), unary ones too, whether or not the handler honours its
// context; the handler's context ends, as the server of a closed
// connection cancels it; and a call made after Close fails with Canceled.
// Compare inproc, Isolated and Inline, with a unix socket, for every kind
// of call and for a client waiting in Header. An Inline handler runs on
// its caller's goroutine, which waits for it to return: there the handler
// honours its context.
func TestClientCloseEndsCallsInFlight(t *testing.T) {
	calls := append(slices.Clone(echoCalls), echoCalls[0])
	calls[len(calls)-1].Name = "header"
	calls[len(calls)-1].Call = func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
		s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "a"})
		if err != nil {
			return nil, err
		}
		if _, err := s.Header(); err != nil {
			return nil, err
		}
		_, err = s.Recv() // Header reports no error: Recv says why the call ended
		return nil, err
	}
	for _, tr := range []struct {
		name   string
		addr   func(t *testing.T) string
		opts   []localgrpc.ServerOption
		inline bool
	}{
		{"unix", func(t *testing.T) string { return "unix:" + socketPath(t) }, nil, false},
		{"shm", func(t *testing.T) string { return "shm:@" + uniqueName(t) }, nil, false},
		{"inproc-isolated", func(t *testing.T) string { return "inproc:" + uniqueName(t) }, []localgrpc.ServerOption{localgrpc.WithInprocOptions(inproc.WithExecution(inproc.Isolated))}, false},
		{"inproc-inline", func(t *testing.T) string { return "inproc:" + uniqueName(t) }, []localgrpc.ServerOption{localgrpc.WithInprocOptions(inproc.WithExecution(inproc.Inline))}, true},
	} {
		for _, call := range calls {
			for _, ignoreContext := range []bool{false, true} {
				if ignoreContext && tr.inline {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/ignore-context=%v", tr.name, call.Name, ignoreContext), func(t *testing.T) {
					release := make(chan struct{})
					var releaseOnce sync.Once
					unhold := func() { releaseOnce.Do(func() { close(release) }) }
					held, ended := make(chan struct{}, 1), make(chan context.Context, 1)
					srv := localgrpc.NewServer(tr.opts...)
					echov1.RegisterEchoServer(srv, holdingEcho{release: release, ignoreContext: ignoreContext, held: held, ended: ended})
					addr := tr.addr(t)
					serve(t, srv, addr)
					t.Cleanup(unhold) // before the server stops
					cc, err := localgrpc.NewClient(addr)
					if err != nil {
						t.Fatal(err)
					}
					c := echov1.NewEchoClient(cc)
					got := make(chan error, 1)
					go func() {
						_, err := call.Call(timeoutCtx(t), c)
						got <- err
					}()
					receive(t, held, "the handler to hold the call")
					cc.Close()
					if err := receive(t, got, "the call in flight to end"); status.Code(err) != codes.Canceled {
						t.Errorf("the call in flight when its ClientConn closed: %v; want Canceled", err)
					}
					unhold()
					// The server of a socket hears of the closed
					// connection a moment after the client returned.
					ctx := receive(t, ended, "the handler's hold to end")
					receive(t, ctx.Done(), "the handler's context to end")
					if err := ctx.Err(); err != context.Canceled {
						t.Errorf("the handler's context once its client's ClientConn closed: %v; want context.Canceled", err)
					}
					if _, err := call.Call(timeoutCtx(t), c); status.Code(err) != codes.Canceled {
						t.Errorf("a call after Close: %v; want Canceled", err)
					}
				})
			}
		}
	}
}

// TestHandlerOnceCallEnded: what a handler's writes and reads return once
// its call ended, as grpc-go's server gives them. A write (SendHeader,
// Send, one blocked in Send included) fails with Unavailable ("transport
// is closing") once the client's connection closed or the server
// stopped, and with Canceled when the client only cancelled its call; a
// Recv fails with Canceled whatever ended the call; the handler's context
// ends with context.Canceled whatever ended it. Compare inproc, in every
// mode, with a unix socket.
func TestHandlerOnceCallEnded(t *testing.T) {
	for _, tr := range transportsEveryMode() {
		for _, op := range servertest.EndedCalls {
			for _, end := range []string{"cancel", "close", "stop"} {
				t.Run(fmt.Sprintf("%s/%s/end=%s", tr.name, op.Name, end), func(t *testing.T) {
					started, report := make(chan struct{}, 1), make(chan servertest.EndReport, 1)
					srv := localgrpc.NewServer(tr.opts...)
					echov1.RegisterEchoServer(srv, servertest.EndedEcho{Started: started, Reports: report})
					addr := tr.addr(t)
					serve(t, srv, addr)
					cc, err := localgrpc.NewClient(addr)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { cc.Close() })
					ctx, cancel := context.WithCancel(timeoutCtx(t))
					t.Cleanup(cancel)
					var wg sync.WaitGroup
					t.Cleanup(wg.Wait)
					wg.Go(func() { op.Call(ctx, echov1.NewEchoClient(cc)) })
					receive(t, started, "the handler to run")
					// Once the connection closed or the server stopped, a
					// write finds the transport gone.
					want := codes.Canceled
					if op.Write {
						want = codes.Unavailable
					}
					switch end {
					case "cancel":
						cancel()
						want = codes.Canceled
					case "close":
						cc.Close()
					case "stop":
						srv.Stop()
					}
					got := receive(t, report, "the handler's report")
					if status.Code(got.Err) != want {
						t.Errorf("the handler's %s once its call ended: %v; want %v", op.Name, got.Err, want)
					}
					if got.CtxErr != context.Canceled {
						t.Errorf("the handler's context once its call ended: %v; want context.Canceled", got.CtxErr)
					}
				})
			}
		}
	}
}

// TestCallAfterCloseRunsInterceptors: a call made on a closed
// connection passes through the client's interceptors, as over grpc-go,
// whose invoker or streamer then fails with Canceled ("grpc: the client
// connection is closing"), for every kind of call. Compare inproc with a
// unix socket.
func TestCallAfterCloseRunsInterceptors(t *testing.T) {
	for _, addr := range []func(t *testing.T) string{
		func(t *testing.T) string { return "unix:" + socketPath(t) },
		func(t *testing.T) string { return "inproc:" + uniqueName(t) },
		func(t *testing.T) string { return "shm:@" + uniqueName(t) },
	} {
		for _, call := range echoCalls {
			addr := addr(t)
			t.Run(transportName(addr)+"/"+call.Name, func(t *testing.T) {
				serve(t, newEchoServer(), addr)
				var mu sync.Mutex
				var seen []string // what the interceptors' invokers returned
				note := func(kind string, err error) {
					mu.Lock()
					defer mu.Unlock()
					seen = append(seen, kind+":"+status.Code(err).String())
				}
				cc, err := localgrpc.NewClient(addr,
					localgrpc.WithClientUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
						err := invoker(ctx, method, req, reply, cc, opts...)
						note("unary", err)
						return err
					}),
					localgrpc.WithClientStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
						s, err := streamer(ctx, desc, cc, method, opts...)
						note("stream", err)
						return s, err
					}))
				if err != nil {
					t.Fatal(err)
				}
				cc.Close()
				if _, err := call.Call(timeoutCtx(t), echov1.NewEchoClient(cc)); status.Code(err) != codes.Canceled {
					t.Errorf("a call after Close: %v; want Canceled", err)
				}
				kind := "stream"
				if call.Name == "unary" {
					kind = "unary"
				}
				mu.Lock()
				defer mu.Unlock()
				if want := []string{kind + ":Canceled"}; !slices.Equal(seen, want) {
					t.Errorf("the interceptors' invokers returned %q for a call after Close; want %q", seen, want)
				}
			})
		}
	}
}

// TestClientCloseTwice: as grpc.ClientConn's, a connection's first Close
// returns nil and every later one an error with code Canceled ("grpc: the
// client connection is closing"). Of Closes racing each other, exactly
// one returns nil. Compare inproc with a unix socket, served or not, used
// or not.
func TestClientCloseTwice(t *testing.T) {
	for _, tr := range []struct {
		name   string
		addr   func(t *testing.T) string
		served bool
	}{
		{"unix", func(t *testing.T) string { return "unix:" + socketPath(t) }, true},
		{"unix-unserved", func(t *testing.T) string { return "unix:" + socketPath(t) }, false},
		{"inproc", func(t *testing.T) string { return "inproc:" + uniqueName(t) }, true},
		{"inproc-unserved", func(t *testing.T) string { return "inproc:" + uniqueName(t) }, false},
		{"shm", func(t *testing.T) string { return "shm:@" + uniqueName(t) }, true},
		{"shm-unserved", func(t *testing.T) string { return "shm:@" + uniqueName(t) }, false},
	} {
		for _, used := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/used=%v", tr.name, used), func(t *testing.T) {
				addr := tr.addr(t)
				if tr.served {
					serve(t, newEchoServer(), addr)
				}
				cc, err := localgrpc.NewClient(addr)
				if err != nil {
					t.Fatal(err)
				}
				if used {
					// Served or failed with Unavailable: only that the
					// connection was used matters here.
					echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
				}
				const racing = 4
				errs := make(chan error, racing)
				var wg sync.WaitGroup
				for range racing {
					wg.Go(func() { errs <- cc.Close() })
				}
				wg.Wait()
				close(errs)
				wins := 0
				for err := range errs {
					switch {
					case err == nil:
						wins++
					case status.Code(err) != codes.Canceled:
						t.Errorf("a Close racing another: %v; want nil or Canceled", err)
					}
				}
				if wins != 1 {
					t.Errorf("%d of %d racing Closes returned nil; want exactly one", wins, racing)
				}
				if err := cc.Close(); status.Code(err) != codes.Canceled {
					t.Errorf("Close of a closed connection: %v; want Canceled", err)
				}
			})
		}
	}
}

// TestStopBeforeServeEndsWaitingCalls: calls made between Listen and
// Serve wait; Stop (no Serve ever) must end them promptly on every
// transport, and leave nothing behind.
func TestStopBeforeServeEndsWaitingCalls(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		t.Run(fmt.Sprintf("graceful=%v", graceful), func(t *testing.T) {
			path := socketPath(t)
			addrs := []string{"inproc:" + uniqueName(t), "unix:" + path, "unix:@" + uniqueName(t), "127.0.0.1:0"}
			srv := newEchoServer(localgrpc.WithHealth())
			if err := srv.Listen(addrs...); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, len(addrs))
			for i, a := range srv.Addrs() {
				c := dial(t, a)
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
					defer cancel()
					_, errs[i] = c.Get(ctx, &echov1.EchoRequest{Text: "x"})
				})
			}
			time.Sleep(200 * time.Millisecond) // let the calls reach their wait
			if graceful {
				within(t, "GracefulStop before Serve", srv.GracefulStop)
			} else {
				srv.Stop()
			}
			within(t, "the waiting calls", wg.Wait)
			for i, err := range errs {
				if c := status.Code(err); c != codes.Unavailable {
					t.Errorf("%s: a call made before Serve, after Stop: %v, want Unavailable", addrs[i], err)
				}
			}
			if err := srv.Serve(context.Background()); !errors.Is(err, grpc.ErrServerStopped) {
				t.Errorf("Serve after Stop: %v", err)
			}
			if err := srv.Listen("inproc:" + uniqueName(t)); !errors.Is(err, grpc.ErrServerStopped) {
				t.Errorf("Listen after Stop: %v", err)
			}
			if _, err := os.Lstat(path); err == nil {
				t.Errorf("socket file %s left after Stop", path)
			}
			if a := srv.Addrs(); len(a) != 0 {
				t.Errorf("Addrs after Stop: %q", a)
			}
		})
	}
}

// TestListenRacesStop: Listen while Serve runs, racing Stop; nothing
// may stay bound (inproc name, socket file, port) and nothing may leak.
func TestListenRacesStop(t *testing.T) {
	dir := t.TempDir()
	for i := range 100 {
		srv := newEchoServer()
		first := "inproc:" + uniqueName(t)
		if err := srv.Listen(first); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background()) }()
		name := "inproc:" + uniqueName(t)
		path := filepath.Join(dir, fmt.Sprintf("%d.sock", i))
		lerr := make(chan error, 1)
		go func() { lerr <- srv.Listen(name, "unix:"+path, "unix:@"+uniqueName(t), "127.0.0.1:0") }()
		if i%2 == 0 {
			srv.GracefulStop()
		} else {
			srv.Stop()
		}
		<-done
		err := <-lerr
		if _, serr := os.Lstat(path); serr == nil {
			t.Fatalf("iteration %d: Listen (err %v) raced Stop and left %s", i, err, path)
		}
		if claimed(name) {
			t.Fatalf("iteration %d: Listen (err %v) raced Stop and left %s claimed", i, err, name)
		}
	}
	goleak.VerifyNone(t)
}

// TestListenAndServeWithDoneContext: ListenAndServe with a finished context
// returns promptly, leaving nothing bound and no goroutine.
func TestListenAndServeWithDoneContext(t *testing.T) {
	path := socketPath(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv := newEchoServer(localgrpc.WithHealth())
	name := "inproc:" + uniqueName(t)
	within(t, "ListenAndServe", func() {
		if err := srv.ListenAndServe(ctx, name, "unix:"+path, "127.0.0.1:0"); err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	})
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s left behind", path)
	}
	next := newEchoServer()
	if err := next.Listen(name); err != nil {
		t.Errorf("%s still claimed: %v", name, err)
	}
	next.Stop()
	goleak.VerifyNone(t)
}

// TestAddedListenerClosedStopsServer: a listener given to AddListener that
// its maker closes while serving makes Serve fail and stop the server:
// every other address must be released.
func TestAddedListenerClosedStopsServer(t *testing.T) {
	path := socketPath(t)
	name := "inproc:" + uniqueName(t)
	srv := newEchoServer()
	if err := srv.Listen(name, "unix:"+path); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddListener(l); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	cc, err := localgrpc.NewClient(srv.Addrs()[2])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	cc.Close()
	l.Close()
	var serr error
	within(t, "Serve after its listener was closed", func() { serr = <-done })
	t.Logf("Serve: %v", serr)
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("%s left behind", path)
	}
	next := newEchoServer()
	if err := next.Listen(name); err != nil {
		t.Errorf("%s still claimed: %v", name, err)
	}
	next.Stop()
	goleak.VerifyNone(t)
}

const registerRaceEnv = "LOCALGRPC_REGISTER_RACE_CHILD"

// TestRegisterRaceChild is run by TestRegisterServiceRacesServe.
func TestRegisterRaceChild(t *testing.T) {
	if os.Getenv(registerRaceEnv) == "" {
		t.Skip("only as a child")
	}
	dir := t.TempDir()
	for i := range 3000 {
		srv := localgrpc.NewServer()
		if err := srv.Listen("unix:" + filepath.Join(dir, fmt.Sprintf("%d.sock", i))); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { recover() }() // the documented panic is fine
			<-start
			healthgrpc.RegisterHealthServer(srv, healthgrpc.UnimplementedHealthServer{})
		})
		served := make(chan error, 1)
		go func() { <-start; served <- srv.Serve(context.Background()) }()
		close(start)
		wg.Wait()
		srv.Stop()
		<-served
	}
	_ = echo.Server{}
}

// TestRegisterServiceRacesServe: RegisterService is documented to
// panic once Serve has begun. It checks the phase, drops the lock, then
// calls grpc.Server.RegisterService: if Serve starts grpc-go in between,
// grpc-go's own check calls logger.Fatalf and the whole process exits.
func TestRegisterServiceRacesServe(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestRegisterRaceChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), registerRaceEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil || bytes.Contains(out.Bytes(), []byte("FATAL")) {
		t.Errorf("RegisterService racing Serve: the process ended: %v\n%s", err, lastLines(out.String(), 15))
	}
}

func lastLines(s string, n int) string {
	lines := bytes.Split([]byte(s), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// TestStopBeforeServeRunsNoHandlers: in-process calls made between
// Listen and Serve wait for Serve. If the server is stopped instead and
// never serves, no handler may run. Stop closes `started` (waking the
// waiting calls) before it stops the in-process channel, so the woken calls
// reach a channel still open and their handlers run, after Stop.
func TestStopBeforeServeRunsNoHandlers(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		t.Run(fmt.Sprintf("graceful=%v", graceful), func(t *testing.T) {
			var ran, ok int
			for range 50 {
				var n atomic.Int64
				srv := newEchoServer(countingInterceptor(&n), localgrpc.WithHealth())
				name := "inproc:" + uniqueName(t)
				if err := srv.Listen(name); err != nil {
					t.Fatal(err)
				}
				cc, err := localgrpc.NewClient(name)
				if err != nil {
					t.Fatal(err)
				}
				c := echov1.NewEchoClient(cc)
				var wg sync.WaitGroup
				var succeeded atomic.Int64
				for range 20 {
					wg.Go(func() {
						if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err == nil {
							succeeded.Add(1)
						}
					})
				}
				time.Sleep(10 * time.Millisecond)
				if graceful {
					srv.GracefulStop()
				} else {
					srv.Stop()
				}
				wg.Wait()
				cc.Close()
				ran += int(n.Load())
				ok += int(succeeded.Load())
			}
			if ran != 0 || ok != 0 {
				t.Errorf("servers stopped before they ever served ran %d handlers, and %d calls succeeded, of 1000 waiting calls", ran, ok)
			}
		})
	}
}

// TestClientCloseUnaryAsGRPC: a connection's Close while a unary handler
// waits for its context, which then ends, and returns a response. Over
// grpc-go the call ends at once with Canceled ("grpc: the client
// connection is closing"), with no header or trailer: the client's
// stats handler hears no InHeader or InTrailer, and grpc.Trailer gets
// none. The server's write of the response then finds the connection
// closed: its stats handler's End reports Unavailable ("transport is
// closing"), not the handler's context's end. Compare inproc, in every
// mode, with a unix socket; a round decided by which of two goroutines
// runs first is repeated.
func TestClientCloseUnaryAsGRPC(t *testing.T) {
	run := func(t *testing.T, addr string, opts []localgrpc.ServerOption) (client, server string) {
		cs, ss := newEventRecorder(), newEventRecorder()
		started := make(chan struct{}, 1)
		srv := localgrpc.NewServer(append(slices.Clone(opts), localgrpc.WithServerStatsHandler(ss))...)
		echov1.RegisterEchoServer(srv, &ctxEcho{get: func(ctx context.Context) (*echov1.EchoResponse, error) {
			started <- struct{}{}
			<-ctx.Done()
			return &echov1.EchoResponse{Text: "late"}, nil
		}})
		serve(t, srv, addr)
		cc, err := localgrpc.NewClient(addr, localgrpc.WithClientStatsHandler(cs))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			var h, tr metadata.MD
			_, err := echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.Header(&h), grpc.Trailer(&tr))
			got <- fmt.Sprintf("%v %q, header %v, trailer %v", status.Code(err), status.Convert(err).Message(), h, tr)
		}()
		receive(t, started, "the handler to run")
		cc.Close()
		client = fmt.Sprintf("%s; its stats handler heard %v", receive(t, got, "the call to end at Close"), cs.untilEnd(t, "the client's End"))
		return client, fmt.Sprint(ss.untilEnd(t, "the server's End"))
	}
	wantClient, wantServer := run(t, "unix:"+socketPath(t), nil)
	t.Logf("grpc-go: the client: %s; the server's stats handler heard %s", wantClient, wantServer)
	for _, m := range inprocModes {
		t.Run(m.name, func(t *testing.T) {
			for range 10 {
				client, server := run(t, "inproc:"+uniqueName(t), m.opts)
				if client != wantClient {
					t.Errorf("the client: %s\ngrpc-go's: %s", client, wantClient)
				}
				if server != wantServer {
					t.Errorf("the server's stats handler heard %s; grpc-go's %s", server, wantServer)
				}
				if t.Failed() {
					break
				}
			}
		})
	}
}

// TestClientCloseInHeaderAsGRPC: a connection's Close while its client
// waits in a stream's Header(). grpc-go's Header() finds the transport
// closing and ends the call for the stats handler with Unavailable,
// wrapping "grpc: the client connection is closing"; the caller's next
// Recv still gets Canceled. Whether the client is in Header() when Close
// comes is up to the scheduler, so each side runs until it was, up to
// ten times, on a unix socket and in every inproc mode.
func TestClientCloseInHeaderAsGRPC(t *testing.T) {
	run := func(t *testing.T, addr string, opts []localgrpc.ServerOption) string {
		cs := newEventRecorder()
		srv := localgrpc.NewServer(opts...)
		echov1.RegisterEchoServer(srv, &streamEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			for {
				if _, err := s.Recv(); err != nil {
					return nil
				}
			}
		}})
		serve(t, srv, addr)
		cc, err := localgrpc.NewClient(addr, localgrpc.WithClientStatsHandler(cs))
		if err != nil {
			t.Fatal(err)
		}
		s, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&echov1.EchoRequest{}); err != nil {
			t.Fatal(err)
		}
		inHeader := make(chan struct{})
		go func() {
			<-inHeader
			time.Sleep(20 * time.Millisecond) // a chance for Header() to wait
			cc.Close()
		}()
		close(inHeader)
		h, herr := s.Header()
		_, rerr := s.Recv()
		return fmt.Sprintf("Header %v %v, Recv %v %q; its stats handler heard %v", h, herr, status.Code(rerr), status.Convert(rerr).Message(), cs.untilEnd(t, "the client's End"))
	}
	inHeader := func(got string) bool { return strings.Contains(got, "End{Unavailable") }
	var want string
	for range 10 {
		if want = run(t, "unix:"+socketPath(t), nil); inHeader(want) {
			break
		}
	}
	t.Logf("grpc-go: %s", want)
	if !inHeader(want) {
		t.Fatalf("grpc-go: %s; want an End with Unavailable", want)
	}
	for _, m := range inprocModes {
		t.Run(m.name, func(t *testing.T) {
			var got string
			for range 10 {
				if got = run(t, "inproc:"+uniqueName(t), m.opts); inHeader(got) {
					break
				}
			}
			if got != want {
				t.Errorf("inproc: %s\ngrpc-go: %s", got, want)
			}
		})
	}
}

// streamEcho is an Echo server whose Update the test supplies.
type streamEcho struct {
	echov1.UnimplementedEchoServer
	update func(grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error
}

func (e *streamEcho) Update(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	return e.update(s)
}

// ctxEcho is an Echo server whose Get the test supplies.
type ctxEcho struct {
	echov1.UnimplementedEchoServer
	get func(ctx context.Context) (*echov1.EchoResponse, error)
}

func (e *ctxEcho) Get(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return e.get(ctx)
}

// eventRecorder is a stats handler that records the kinds of the events
// of the calls it hears, with the code and message of an End.
type eventRecorder struct {
	mu     sync.Mutex
	events []string
	ended  chan struct{}
}

func newEventRecorder() *eventRecorder { return &eventRecorder{ended: make(chan struct{}, 1)} }

func (r *eventRecorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (r *eventRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (r *eventRecorder) HandleConn(context.Context, stats.ConnStats) {}

func (r *eventRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	var e string
	switch s := s.(type) {
	case *stats.End:
		e = fmt.Sprintf("End{%v %q}", status.Code(s.Error), status.Convert(s.Error).Message())
	case *stats.DelayedPickComplete:
		return // grpc-go's client waited for a connection to pick
	default:
		e = strings.TrimPrefix(fmt.Sprintf("%T", s), "*stats.")
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	if _, ok := s.(*stats.End); ok {
		r.ended <- struct{}{}
	}
}

// untilEnd waits for an End and returns the events heard.
func (r *eventRecorder) untilEnd(t *testing.T, what string) []string {
	t.Helper()
	receive(t, r.ended, what)
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}
