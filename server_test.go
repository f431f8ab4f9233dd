package localgrpc_test

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// TestEveryCallEveryTransport serves Echo on all four transports at once
// from one Server and makes every kind of call through each, with the same
// generated client.
func TestEveryCallEveryTransport(t *testing.T) {
	srv := newEchoServer()
	name := uniqueName(t)
	addrs := []string{"inproc:" + name, "unix:" + socketPath(t), "unix:@" + name, "127.0.0.1:0"}
	serve(t, srv, addrs...)
	got := srv.Addrs()
	if len(got) != len(addrs) || got[0] != addrs[0] || got[1] != addrs[1] || got[2] != addrs[2] {
		t.Fatalf("Addrs() = %q, want %q with the TCP port resolved", got, addrs)
	}
	if _, port, _ := net.SplitHostPort(got[3]); port == "0" || port == "" {
		t.Fatalf("Addrs() reports TCP address %q, want its real port", got[3])
	}
	for _, addr := range got {
		c := dial(t, addr)
		for _, call := range echoCalls {
			t.Run(transportName(addr)+"/"+call.Name, func(t *testing.T) {
				texts, err := call.Call(timeoutCtx(t), c)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(texts, call.Want) {
					t.Errorf("got %q, want %q", texts, call.Want)
				}
			})
		}
	}
}

// TestHealthOnEveryTransport checks that WithHealth and WithReflection
// answer on every transport.
func TestHealthOnEveryTransport(t *testing.T) {
	srv := newEchoServer(localgrpc.WithHealth(), localgrpc.WithReflection())
	path := socketPath(t)
	serve(t, srv, "inproc:"+uniqueName(t), "unix:"+path, "127.0.0.1:0")
	for _, addr := range srv.Addrs() {
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := healthgrpc.NewHealthClient(cc).Check(timeoutCtx(t), &healthgrpc.HealthCheckRequest{})
		if err != nil || r.GetStatus() != healthgrpc.HealthCheckResponse_SERVING {
			t.Errorf("%s: health Check = %v, %v; want SERVING", addr, r, err)
		}
		if got := listServices(t, cc); !slices.Contains(got, "echo.v1.Echo") || !slices.Contains(got, "grpc.health.v1.Health") {
			t.Errorf("%s: reflection lists %q, want echo.v1.Echo and grpc.health.v1.Health", addr, got)
		}
		cc.Close()
	}
}

// listServices asks the reflection service for the service names.
func listServices(t *testing.T, cc grpc.ClientConnInterface) []string {
	t.Helper()
	names, err := echotest.ListServices(timeoutCtx(t), cc)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestStopRemovesEverything checks that after Stop no socket file and no
// in-process name remain, and Serve returns.
func TestStopRemovesEverything(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		srv := newEchoServer()
		path, name := socketPath(t), uniqueName(t)
		if err := srv.Listen("unix:"+path, "inproc:"+name, "unix:@"+name); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background()) }()
		if _, err := os.Lstat(path); err != nil {
			t.Fatalf("the socket file is missing while serving: %v", err)
		}
		if fi, _ := os.Lstat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
		}
		if graceful {
			srv.GracefulStop()
		} else {
			srv.Stop()
		}
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("Serve after stop: %v", err)
		}
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the socket file remains after stop: %v", err)
		}
		if claimed("inproc:" + name) {
			t.Error("the in-process name is still claimed after stop")
		}
		if got := srv.Addrs(); len(got) != 0 {
			t.Errorf("Addrs() = %q after stop, want none", got)
		}
		// The abstract name is free again.
		l, err := net.Listen("unix", "@"+name)
		if err != nil {
			t.Errorf("the abstract socket is still bound after stop: %v", err)
		} else {
			l.Close()
		}
	}
}

// TestServeEndsWithContext checks that Serve returns once its context
// ends, having stopped the server.
func TestServeEndsWithContext(t *testing.T) {
	srv := newEchoServer()
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addrs()[0]
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	c := dial(t, addr)
	if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("call after Serve's context ended: %v, want Unavailable", err)
	}
}

// TestSocketMode checks WithSocketMode.
func TestSocketMode(t *testing.T) {
	srv := newEchoServer(localgrpc.WithSocketMode(0o660))
	path := socketPath(t)
	serve(t, srv, "unix:"+path)
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode %v, want 0660", fi.Mode().Perm())
	}
}

// TestInterceptorsOnEveryTransport checks that a server interceptor and a
// client interceptor given once run for calls on every transport.
func TestInterceptorsOnEveryTransport(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	note := func(s string) {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	srv := newEchoServer(localgrpc.WithServerUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		note("server " + info.FullMethod)
		return h(ctx, req)
	}))
	serve(t, srv, "inproc:"+uniqueName(t), "unix:"+socketPath(t), "127.0.0.1:0")
	clientInt := localgrpc.WithClientUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		note("client " + method)
		return inv(ctx, method, req, reply, cc, opts...)
	})
	for _, addr := range srv.Addrs() {
		mu.Lock()
		seen = nil
		mu.Unlock()
		if _, err := dial(t, addr, clientInt).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
			t.Fatal(err)
		}
		want := []string{"client /echo.v1.Echo/Get", "server /echo.v1.Echo/Get"}
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("%s: interceptors saw %q, want %q", addr, got, want)
		}
	}
}

// endNotifier is a stats handler that tells of every call that ends, by
// method.
type endNotifier struct{ ended chan string }

type methodKey struct{}

func (n endNotifier) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, info.FullMethodName)
}

func (n endNotifier) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.End); ok {
		n.ended <- ctx.Value(methodKey{}).(string)
	}
}

func (endNotifier) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (endNotifier) HandleConn(context.Context, stats.ConnStats)                       {}

// TestStatsHandlerOnEveryTransport checks that a stats handler given once
// hears of calls on every transport.
func TestStatsHandlerOnEveryTransport(t *testing.T) {
	h := endNotifier{ended: make(chan string, 1)}
	srv := newEchoServer(localgrpc.WithServerStatsHandler(h))
	serve(t, srv, "inproc:"+uniqueName(t), "unix:"+socketPath(t), "unix:@"+uniqueName(t), "127.0.0.1:0")
	for _, addr := range srv.Addrs() {
		if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-h.ended:
			if m != "/echo.v1.Echo/Get" {
				t.Errorf("%s: the stats handler saw the end of %q, want /echo.v1.Echo/Get", addr, m)
			}
		case <-time.After(waitLimit):
			t.Errorf("%s: the stats handler saw no end of the call", addr)
		}
	}
}

// TestAddrsParseBack serves on addresses given in every form of the
// grammar and checks that each address Addrs reports parses back to
// itself and can be dialed.
func TestAddrsParseBack(t *testing.T) {
	name := uniqueName(t)
	addrs := []string{
		"inproc:" + name,
		"unix://" + socketPath(t),  // an absolute path: three slashes
		"unix:///" + socketPath(t), // four: the path begins with "//"
		"unix-abstract:" + name,
		"127.0.0.1:0",
		":0",
	}
	srv := newEchoServer()
	serve(t, srv, addrs...)
	for _, addr := range srv.Addrs() {
		a, err := localgrpc.ParseAddress(addr)
		if err != nil || a.String() != addr {
			t.Errorf("Addrs() reports %q, which parses as %q, %v", addr, a, err)
			continue
		}
		if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
			t.Errorf("a call to %s: %v", addr, err)
		}
	}
}
