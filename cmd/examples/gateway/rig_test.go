package gateway_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/gateway"
	greeterv1 "github.com/localgrpc/localgrpc/cmd/examples/gateway/gen/greeter/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc/status"
)

// A backend is one gateway in front of the rig's server, named by how
// its gRPC client reaches the server.
type backend struct {
	name string // inproc, unix or tcp: how the gateway reaches the server
	url  string // http://127.0.0.1:PORT, where the gateway serves REST
	// calls counts the gRPC calls the gateway's client made, by its
	// client interceptors.
	calls *atomic.Int64
}

// A rig is one localgrpc.Server of impl listening in-process, on a unix
// socket and on loopback TCP, and a gateway for each of those addresses,
// each served over HTTP on loopback; the unix one first, as the oracle
// the others are compared with. It all stops when the test ends.
type rig struct {
	backends []backend
	client   *http.Client
}

func newRig(tb testing.TB, impl greeterv1.GreeterServiceServer, opts ...localgrpc.ServerOption) *rig {
	tb.Helper()
	srv := localgrpc.NewServer(opts...)
	greeterv1.RegisterGreeterServiceServer(srv, impl)
	// The directory is short, not tb.TempDir(), whose path holds the
	// test's name and could pass a socket path's 108 bytes.
	dir, err := os.MkdirTemp("", "gateway")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	addrs := map[string]string{
		"unix":   "unix:" + filepath.Join(dir, "s.sock"),
		"inproc": "inproc:" + servertest.UniqueName(),
		"tcp":    "127.0.0.1:0",
	}
	servertest.Serve(tb, srv, addrs["unix"], addrs["inproc"], addrs["tcp"])
	// Addrs has TCP's port resolved, in the order of Listen's arguments.
	addrs["tcp"] = srv.Addrs()[2]

	transport := &http.Transport{}
	r := &rig{client: &http.Client{Transport: transport}}
	// Registered before the HTTP servers' cleanups, so run after them:
	// their connections are closed by then.
	tb.Cleanup(transport.CloseIdleConnections)
	for _, name := range []string{"unix", "inproc", "tcp"} { // the oracle first
		calls := new(atomic.Int64)
		cc, err := localgrpc.NewClient(addrs[name],
			localgrpc.WithClientUnaryInterceptor(countUnary(calls)),
			localgrpc.WithClientStreamInterceptor(countStream(calls)))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { cc.Close() })
		mux := runtime.NewServeMux()
		// The context only scopes the registration: each handler calls
		// with its request's.
		if err := greeterv1.RegisterGreeterServiceHandlerClient(context.Background(), mux, greeterv1.NewGreeterServiceClient(cc)); err != nil {
			tb.Fatal(err)
		}
		r.backends = append(r.backends, backend{name: name, url: serveHTTP(tb, mux), calls: calls})
	}
	return r
}

// backend is the rig's backend of that name.
func (r *rig) backend(tb testing.TB, name string) backend {
	for _, b := range r.backends {
		if b.name == name {
			return b
		}
	}
	tb.Fatalf("no backend %s", name)
	return backend{}
}

// handlerServer is a gateway that calls impl itself, registered with
// RegisterGreeterServiceHandlerServer rather than over a connection,
// served over HTTP on loopback until the test ends.
func handlerServer(tb testing.TB, impl greeterv1.GreeterServiceServer) backend {
	tb.Helper()
	mux := runtime.NewServeMux()
	if err := greeterv1.RegisterGreeterServiceHandlerServer(context.Background(), mux, impl); err != nil {
		tb.Fatal(err)
	}
	return backend{name: "handler-server", url: serveHTTP(tb, mux)}
}

// serveHTTP serves h over HTTP on a loopback port until the test ends,
// and returns its base URL.
func serveHTTP(tb testing.TB, h http.Handler) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("http.Server.Serve: %v", err)
		}
	})
	tb.Cleanup(func() {
		// Close, not Shutdown: a test may leave a stream of greetings
		// that would never end.
		hs.Close()
		wg.Wait()
	})
	return "http://" + l.Addr().String()
}

// waitName is the name a waitingGreeter's Greet waits on.
const waitName = "wait"

// A waitingGreeter is the Greeter, but its Greet of waitName tells
// started and waits until its call ends, however that comes: a deadline,
// the client going away.
type waitingGreeter struct {
	gateway.Greeter
	started chan struct{}
}

func newWaitingGreeter() waitingGreeter {
	return waitingGreeter{started: make(chan struct{}, 8)}
}

func (g waitingGreeter) Greet(ctx context.Context, req *greeterv1.GreetRequest) (*greeterv1.GreetResponse, error) {
	if req.GetName() != waitName {
		return g.Greeter.Greet(ctx, req)
	}
	g.started <- struct{}{}
	<-ctx.Done()
	return nil, status.FromContextError(ctx.Err()).Err()
}
