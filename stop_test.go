package localgrpc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
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
