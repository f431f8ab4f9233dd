package localgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestEveryCallEveryTransport serves Echo on every transport at once from
// one Server and makes every kind of call through each, with the same
// generated client.
func TestEveryCallEveryTransport(t *testing.T) {
	srv := newEchoServer()
	name := uniqueName(t)
	addrs := []string{"inproc:" + name, "unix:" + socketPath(t), "unix:@" + name, "shm:@" + uniqueName(t), "shm:" + socketPath(t), "127.0.0.1:0"}
	serve(t, srv, addrs...)
	got := srv.Addrs()
	if len(got) != len(addrs) || !slices.Equal(got[:5], addrs[:5]) {
		t.Fatalf("Addrs() = %q, want %q with the TCP port resolved", got, addrs)
	}
	if _, port, _ := net.SplitHostPort(got[5]); port == "0" || port == "" {
		t.Fatalf("Addrs() reports TCP address %q, want its real port", got[5])
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
	serve(t, srv, "inproc:"+uniqueName(t), "unix:"+path, "shm:@"+uniqueName(t), "127.0.0.1:0")
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

// optionsNoted is a client interceptor, unary and stream, that notes the
// types of the call options it gets, then calls its invoker or streamer
// with them, or with none if drop.
func optionsNoted(note func(kind string, opts []grpc.CallOption), drop bool) []localgrpc.ClientOption {
	pass := func(opts []grpc.CallOption) []grpc.CallOption {
		if drop {
			return nil
		}
		return opts
	}
	return []localgrpc.ClientOption{
		localgrpc.WithClientUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			note("unary", opts)
			return inv(ctx, method, req, reply, cc, pass(opts)...)
		}),
		localgrpc.WithClientStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			note("stream", opts)
			return streamer(ctx, desc, cc, method, pass(opts)...)
		}),
	}
}

// inprocModes are the ways a Server runs its in-process calls, by name.
var inprocModes = []struct {
	name string
	opts []localgrpc.ServerOption
}{
	{"copy=clone/exec=isolated", []localgrpc.ServerOption{localgrpc.WithInprocOptions(inproc.WithCopy(inproc.Clone), inproc.WithExecution(inproc.Isolated))}},
	{"copy=share/exec=isolated", []localgrpc.ServerOption{localgrpc.WithInprocOptions(inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Isolated))}},
	{"copy=clone/exec=inline", []localgrpc.ServerOption{localgrpc.WithInprocOptions(inproc.WithCopy(inproc.Clone), inproc.WithExecution(inproc.Inline))}},
	{"copy=share/exec=inline", []localgrpc.ServerOption{localgrpc.WithInprocOptions(inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Inline))}},
}

// transportsEveryMode are a unix socket, then inproc in every mode.
func transportsEveryMode() []struct {
	name string
	addr func(t *testing.T) string
	opts []localgrpc.ServerOption
} {
	out := []struct {
		name string
		addr func(t *testing.T) string
		opts []localgrpc.ServerOption
	}{
		{"unix", func(t *testing.T) string { return "unix:" + socketPath(t) }, nil},
		{"shm", func(t *testing.T) string { return "shm:@" + uniqueName(t) }, nil},
	}
	for _, m := range inprocModes {
		out = append(out, struct {
			name string
			addr func(t *testing.T) string
			opts []localgrpc.ServerOption
		}{"inproc/" + m.name, func(t *testing.T) string { return "inproc:" + uniqueName(t) }, m.opts})
	}
	return out
}

// TestClientInterceptorSeesCallerOptions: the call options a client
// interceptor gets are the connection's default call options, then the
// caller's (a generated client's grpc.StaticMethod first), as grpc-go
// combines them: nothing of the connection itself, not even with a
// stats handler. Compare inproc, in every mode, with a unix socket, for
// every kind of call.
func TestClientInterceptorSeesCallerOptions(t *testing.T) {
	var want map[string][]string // by call: the option types grpc-go's interceptors got
	for _, tr := range transportsEveryMode() {
		t.Run(tr.name, func(t *testing.T) {
			srv := newEchoServer(tr.opts...)
			addr := tr.addr(t)
			serve(t, srv, addr)
			var mu sync.Mutex
			var seen []string
			note := func(kind string, opts []grpc.CallOption) {
				mu.Lock()
				defer mu.Unlock()
				for _, o := range opts {
					seen = append(seen, fmt.Sprintf("%s:%T", kind, o))
				}
			}
			opts := append(optionsNoted(note, false),
				localgrpc.WithClientStatsHandler(noStats{}),
				localgrpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<20)))
			c := dial(t, addr, opts...)
			got := map[string][]string{}
			for _, call := range echoCalls {
				mu.Lock()
				seen = nil
				mu.Unlock()
				if _, err := call.Call(timeoutCtx(t), c); err != nil {
					t.Fatalf("%s: %v", call.Name, err)
				}
				mu.Lock()
				got[call.Name] = slices.Clone(seen)
				mu.Unlock()
			}
			if want == nil {
				want = got
				t.Logf("grpc-go's interceptors got %v", want)
				return
			}
			for name, w := range want {
				if !slices.Equal(got[name], w) {
					t.Errorf("%s: the interceptors got %v; grpc-go's %v", name, got[name], w)
				}
			}
		})
	}
}

// TestClientInterceptorDroppingOptions: a client interceptor that calls
// its invoker or streamer without the call options it got. A
// grpc.ClientConn's stats handlers and Close are its own, not call
// options: the call still reports to the connection's stats handler, and
// Close still ends it in flight, with Canceled. Compare inproc, in every
// mode, with a unix socket, for every kind of call.
func TestClientInterceptorDroppingOptions(t *testing.T) {
	methods := map[string]string{"unary": "/echo.v1.Echo/Get", "server-stream": "/echo.v1.Echo/Expand", "client-stream": "/echo.v1.Echo/Collect", "bidi": "/echo.v1.Echo/Update"}
	for _, tr := range transportsEveryMode() {
		for _, call := range echoCalls {
			t.Run(tr.name+"/"+call.Name, func(t *testing.T) {
				release, held := make(chan struct{}), make(chan struct{}, 1)
				srv := localgrpc.NewServer(tr.opts...)
				echov1.RegisterEchoServer(srv, holdingEcho{release: release, held: held})
				addr := tr.addr(t)
				serve(t, srv, addr)
				t.Cleanup(func() { close(release) }) // before the server stops
				ends := endNotifier{ended: make(chan callEnd, 1)}
				cc, err := localgrpc.NewClient(addr, append(optionsNoted(func(string, []grpc.CallOption) {}, true), localgrpc.WithClientStatsHandler(ends))...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cc.Close() })
				got := make(chan error, 1)
				var wg sync.WaitGroup
				t.Cleanup(wg.Wait)
				wg.Go(func() {
					_, err := call.Call(timeoutCtx(t), echov1.NewEchoClient(cc))
					got <- err
				})
				receive(t, held, "the handler to hold the call")
				cc.Close()
				if err := receive(t, got, "the call in flight to end at Close"); status.Code(err) != codes.Canceled {
					t.Errorf("the call in flight when its connection closed: %v; want Canceled", err)
				}
				e := receive(t, ends.ended, "the stats handler to hear the call end")
				// grpc-go's client stream, on a busy machine, may read the
				// closing transport's EOF before Close's error and report
				// that End as a success (stream.go, finish): on a socket,
				// grpc-go's own behaviour, it is allowed; in-process it is not.
				endOK := status.Code(e.err) == codes.Canceled || tr.name == "unix" && e.err == nil
				if e.method != methods[call.Name] || !endOK {
					t.Errorf("the stats handler heard %s end with %v; want %s with Canceled", e.method, e.err, methods[call.Name])
				}
			})
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
