package localgrpc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// holdingEcho holds its calls: Update answers the first message and then
// holds the stream, Get, Expand and Collect hold at once. A call is held
// until release is closed or, if the handler honours its context, until
// that ends. held, if not nil, hears of each call as it is held; ended,
// if not nil, of the handler's context when the hold ended.
type holdingEcho struct {
	echov1.UnimplementedEchoServer
	release       <-chan struct{}
	ignoreContext bool
	held          chan<- struct{}
	ended         chan<- context.Context
}

func (h holdingEcho) Get(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return &echov1.EchoResponse{}, h.hold(ctx)
}

func (h holdingEcho) Expand(_ *echov1.EchoRequest, s echov1.Echo_ExpandServer) error {
	return h.hold(s.Context())
}

func (h holdingEcho) Collect(s echov1.Echo_CollectServer) error { return h.hold(s.Context()) }

func (h holdingEcho) Update(s echov1.Echo_UpdateServer) error {
	req, err := s.Recv()
	if err != nil {
		return err
	}
	if err := s.Send(&echov1.EchoResponse{Text: req.GetText()}); err != nil {
		return err
	}
	return h.hold(s.Context())
}

func (h holdingEcho) hold(ctx context.Context) error {
	if h.held != nil {
		h.held <- struct{}{}
	}
	done := ctx.Done()
	if h.ignoreContext {
		done = nil
	}
	select {
	case <-h.release:
	case <-done:
	}
	if h.ended != nil {
		h.ended <- ctx
	}
	return ctx.Err()
}

// holdStream opens an Update stream on c and returns once its handler
// runs.
func holdStream(t *testing.T, ctx context.Context, c echov1.EchoClient) echov1.Echo_UpdateClient {
	t.Helper()
	s, err := c.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&echov1.EchoRequest{Text: "hold"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	return s
}

// within runs f and fails the test if it has not returned within
// waitLimit.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("%s has not returned after %v", what, waitLimit)
	}
}

// TestStopCutsGracefulStop holds a call open, starts GracefulStop, and
// calls Stop: as grpc-go documents for its Server, Stop ends the drain,
// returns without waiting for handlers, Serve returns, and the held call
// ends with Unavailable (or Canceled), on every transport. GracefulStop returns once
// the handler has: at once for one that honours its context.
func TestStopCutsGracefulStop(t *testing.T) {
	for _, kind := range []string{"inproc", "unix", "abstract", "tcp", "shm"} {
		for _, ignore := range []bool{false, true} {
			t.Run(fmt.Sprintf("transport=%s/ignoreContext=%v", kind, ignore), func(t *testing.T) {
				testStopCutsGracefulStop(t, kind, ignore)
			})
		}
	}
}

func testStopCutsGracefulStop(t *testing.T, kind string, ignoreContext bool) {
	release := make(chan struct{})
	srv := localgrpc.NewServer(localgrpc.WithHealth())
	echov1.RegisterEchoServer(srv, holdingEcho{release: release, ignoreContext: ignoreContext})
	addr := map[string]string{
		"inproc":   "inproc:" + uniqueName(t),
		"unix":     "unix:" + socketPath(t),
		"abstract": "unix:@" + uniqueName(t),
		"tcp":      "127.0.0.1:0",
		"shm":      "shm:@" + uniqueName(t),
	}[kind]
	if err := srv.Listen(addr); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	cc, err := localgrpc.NewClient(srv.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	ctx := timeoutCtx(t)
	held := holdStream(t, ctx, echov1.NewEchoClient(cc))

	// The health watch reports NOT_SERVING once the drain has begun, so
	// that Stop surely comes during it.
	watch, err := healthgrpc.NewHealthClient(cc).Watch(ctx, &healthgrpc.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthgrpc.HealthCheckResponse_SERVING {
		t.Fatalf("health watch: %v, %v; want SERVING", r, err)
	}
	graceful := make(chan struct{})
	go func() {
		defer close(graceful)
		srv.GracefulStop()
	}()
	t.Cleanup(func() {
		close(release)
		within(t, "GracefulStop once the handler returned", func() { <-graceful })
	})
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthgrpc.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health watch while draining: %v, %v; want NOT_SERVING", r, err)
	}
	select {
	case <-graceful:
		t.Fatal("GracefulStop returned while a call was in flight")
	default:
	}

	within(t, "Stop during GracefulStop", srv.Stop)
	within(t, "Serve after Stop", func() {
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	// grpc-go's client sees the connection go; inproc's may see the
	// handler's own end first, as its contract allows.
	if _, err := held.Recv(); status.Code(err) != codes.Unavailable && status.Code(err) != codes.Canceled {
		t.Errorf("the held call after Stop: %v, want Unavailable or Canceled", err)
	}
	if !ignoreContext {
		within(t, "GracefulStop after Stop", func() { <-graceful })
	}
}

// attack7: GracefulStop and Stop on one localgrpc.Server serving inproc:,
// unix and shm: clients at once (oracle: grpc.Server, whose GracefulStop
// cut short by Stop returns only once its handlers have returned, and
// whose Stop does not wait for them), and clients calling in a loop while
// the server drains.

// stopper is what a7StopCut needs of either server.
type stopper interface {
	GracefulStop()
	Stop()
}

// a7StopCut: handlers that ignore their context are running (one stream
// and one unary call per client); GracefulStop, then Stop. Stop returns
// at once; GracefulStop only once the handlers have returned.
func a7StopCut(t *testing.T, srv stopper, clients []echov1.EchoClient, started *sync.WaitGroup, release chan struct{}, returned *sync.WaitGroup) string {
	ctx := timeoutCtx(t)
	res := make(chan string, 2*len(clients))
	for _, c := range clients {
		go func() {
			_, err := c.Get(ctx, &echov1.EchoRequest{})
			res <- "unary " + status.Code(err).String()
		}()
		go func() {
			s, err := c.Update(ctx)
			if err != nil {
				res <- "bidi " + status.Code(err).String()
				return
			}
			s.Send(&echov1.EchoRequest{})
			_, err = s.Recv()
			res <- "bidi " + status.Code(err).String()
		}()
	}
	started.Wait()
	gsDone := make(chan struct{})
	go func() { srv.GracefulStop(); close(gsDone) }()
	time.Sleep(30 * time.Millisecond)
	stopDone := make(chan struct{})
	go func() { srv.Stop(); close(stopDone) }()
	out := ""
	select {
	case <-stopDone:
	case <-time.After(500 * time.Millisecond):
		out += "Stop waited for the handlers; "
	}
	// One bound for all the calls, with room for a busy machine under the
	// race detector (300 ms a call missed one of CI's runs over shm:).
	calls := map[string]int{}
	deadline := time.After(time.Second)
	for n := 2 * len(clients); n > 0; n-- {
		select {
		case r := <-res:
			calls[r]++
		case <-deadline:
			calls["call still blocked"] += n
			n = 1
		}
	}
	select {
	case <-gsDone:
		out += "GracefulStop returned with handlers running; "
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	returned.Wait()
	select {
	case <-gsDone:
	case <-time.After(3 * time.Second):
		out += "GracefulStop hung after the handlers returned; "
	}
	<-stopDone
	return out + fmt.Sprint(calls)
}

func a7BlockingEcho(started, returned *sync.WaitGroup, release chan struct{}) *a5Echo {
	return &a5Echo{
		get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			defer returned.Done()
			started.Done()
			<-release
			return &echov1.EchoResponse{}, nil
		},
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			defer returned.Done()
			s.Recv()
			started.Done()
			<-release
			return nil
		},
	}
}

func TestAttack7StopCutsGracefulStopEveryTransport(t *testing.T) {
	t.Run("grpc-go-bufconn", func(t *testing.T) {
		var started, returned sync.WaitGroup
		started.Add(2)
		returned.Add(2)
		release := make(chan struct{})
		srv, cc := servertest.GRPCServerOverBufconn(t, func(r grpc.ServiceRegistrar) {
			echov1.RegisterEchoServer(r, a7BlockingEcho(&started, &returned, release))
		}, nil)
		got := a7StopCut(t, srv, []echov1.EchoClient{echov1.NewEchoClient(cc)}, &started, release, &returned)
		t.Log(got)
		if got != "map[bidi Unavailable:1 unary Unavailable:1]" {
			t.Errorf("oracle gave %s", got)
		}
	})
	for _, m := range inprocModes {
		for _, which := range []string{"inproc", "unix", "shm", "all"} {
			if which != "inproc" && m.name != inprocModes[0].name {
				continue // sockets do not depend on inproc's modes
			}
			t.Run(m.name+"/"+which, func(t *testing.T) {
				all := []string{"inproc:" + uniqueName(t), "unix:" + socketPath(t), "shm:@" + uniqueName(t)}
				addrs := all
				switch which {
				case "inproc":
					addrs = all[:1]
				case "unix":
					addrs = all[1:2]
				case "shm":
					addrs = all[2:]
				}
				var started, returned sync.WaitGroup
				started.Add(2 * len(addrs))
				returned.Add(2 * len(addrs))
				release := make(chan struct{})
				s := localgrpc.NewServer(m.opts...)
				echov1.RegisterEchoServer(s, a7BlockingEcho(&started, &returned, release))
				if err := s.Listen(addrs...); err != nil {
					t.Fatal(err)
				}
				served := make(chan error, 1)
				go func() { served <- s.Serve(context.Background()) }()
				var clients []echov1.EchoClient
				for _, a := range addrs {
					clients = append(clients, a6Client(t, a))
				}
				got := a7StopCut(t, s, clients, &started, release, &returned)
				t.Log(got)
				bads := []string{"Stop waited", "GracefulStop returned with", "hung", "OK", "Unknown", "Internal"}
				if !contains(m.name, "inline") || which == "unix" || which == "shm" {
					// An Inline handler that ignores its context blocks
					// its inproc caller (documented).
					bads = append(bads, "still blocked")
				}
				for _, bad := range bads {
					if contains(got, bad) {
						t.Errorf("%s", got)
						break
					}
				}
				select {
				case <-served:
				case <-time.After(3 * time.Second):
					t.Error("Serve did not return")
				}
			})
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) > 0 && len(s) >= len(sub) && (func() bool {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
		return false
	})()
}

// Clients on inproc:, unix and shm: call in a loop while the server
// drains: each call is served or refused with Unavailable, a client that
// was refused is refused from then on, and GracefulStop returns.
func TestAttack7GracefulStopLoopingClients(t *testing.T) {
	for _, m := range inprocModes {
		t.Run(m.name, func(t *testing.T) {
			s := localgrpc.NewServer(m.opts...)
			echov1.RegisterEchoServer(s, &a5Echo{get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
				time.Sleep(200 * time.Microsecond)
				return &echov1.EchoResponse{Text: r.Text}, nil
			}})
			addrs := []string{"inproc:" + uniqueName(t), "unix:" + socketPath(t), "shm:@" + uniqueName(t)}
			if err := s.Listen(addrs...); err != nil {
				t.Fatal(err)
			}
			go s.Serve(context.Background())
			t.Cleanup(s.Stop)
			ctx := timeoutCtx(t)
			var wg sync.WaitGroup
			results := make([]string, 2*len(addrs))
			served := make(chan struct{}, 2*len(addrs))
			for i, a := range addrs {
				c := a6Client(t, a)
				for j := range 2 {
					wg.Go(func() {
						refused, okAfter, n := 0, 0, 0
						other := map[string]int{}
						for refused < 20 && n < 100000 {
							n++
							r, err := c.Get(ctx, &echov1.EchoRequest{Text: "x"})
							switch {
							case err == nil && r.Text == "x":
								if n == 1 {
									served <- struct{}{}
								}
								if refused > 0 {
									okAfter++
								}
							case status.Code(err) == 14:
								refused++
							default:
								other[a6Err(err)]++
							}
						}
						results[2*i+j] = fmt.Sprintf("%s: served after refused %d, other %v, ended %v", transportName(a), okAfter, other, refused >= 20)
					})
				}
			}
			for range 2 * len(addrs) {
				<-served
			}
			time.Sleep(5 * time.Millisecond)
			gs := make(chan struct{})
			go func() { s.GracefulStop(); close(gs) }()
			select {
			case <-gs:
			case <-time.After(3 * time.Second):
				t.Error("GracefulStop hung with clients calling in a loop")
			}
			wg.Wait()
			for _, r := range results {
				if !contains(r, "served after refused 0, other map[], ended true") {
					t.Error(r)
				}
			}
		})
	}
}
