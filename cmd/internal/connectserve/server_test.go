package connectserve_test

import (
	"context"
	"crypto/rand"
	"errors"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/connectserve"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serveEcho serves Echo on addrs until the test ends and returns the
// addresses it listens on.
func serveEcho(t *testing.T, addrs ...string) []string {
	t.Helper()
	path, handler := echov1connect.NewEchoHandler(echoconnect.Server{})
	srv := connectserve.New([]connectserve.Service{{Name: echov1connect.EchoName, Path: path, Handler: handler}}, 0o600)
	if err := srv.Listen(addrs...); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv.Addrs()
}

func socketAddrs(t *testing.T) []string {
	return []string{
		"127.0.0.1:0",
		"unix:" + filepath.Join(t.TempDir(), "echo.sock"),
		"unix:@localgrpc-test-" + rand.Text(),
	}
}

// Every connect-go protocol, and grpc-go, call every method on every kind
// of address.
func TestEveryProtocolEveryAddress(t *testing.T) {
	addrs := serveEcho(t, socketAddrs(t)...)
	protocols := map[string][]connect.ClientOption{
		"connect":          nil,
		"connect-grpc":     {connect.WithGRPC()},
		"connect-grpc-web": {connect.WithGRPCWeb()},
	}
	for _, addr := range addrs {
		for name, opts := range protocols {
			t.Run(name+"/"+addr, func(t *testing.T) {
				hc, base, err := localgrpc.HTTPClient(addr)
				if err != nil {
					t.Fatal(err)
				}
				defer hc.CloseIdleConnections()
				c := echov1connect.NewEchoClient(hc, base, opts...)
				ctx := t.Context()
				resp, err := c.Get(ctx, connect.NewRequest(&echov1.EchoRequest{Text: "hi"}))
				if err != nil || resp.Msg.GetText() != "hi" {
					t.Fatalf("Get: %v, %v", resp, err)
				}
				ss, err := c.Expand(ctx, connect.NewRequest(&echov1.EchoRequest{Text: "a b c"}))
				if err != nil {
					t.Fatal(err)
				}
				var words []string
				for ss.Receive() {
					words = append(words, ss.Msg().GetText())
				}
				if err := ss.Err(); err != nil || strings.Join(words, ",") != "a,b,c" {
					t.Errorf("Expand: %q, %v", words, err)
				}
				ss.Close()
				cs := c.Collect(ctx)
				for _, w := range []string{"x", "y"} {
					if err := cs.Send(&echov1.EchoRequest{Text: w}); err != nil {
						t.Fatal(err)
					}
				}
				joined, err := cs.CloseAndReceive()
				if err != nil || joined.Msg.GetText() != "x y" {
					t.Errorf("Collect: %v, %v", joined, err)
				}
				bs := c.Update(ctx)
				for _, w := range []string{"p", "q"} {
					if err := bs.Send(&echov1.EchoRequest{Text: w}); err != nil {
						t.Fatal(err)
					}
					got, err := bs.Receive()
					if err != nil || got.GetText() != w {
						t.Fatalf("Update: %v, %v", got, err)
					}
				}
				bs.CloseRequest()
				if _, err := bs.Receive(); !errors.Is(err, io.EOF) {
					t.Errorf("Update's end: %v", err)
				}
				bs.CloseResponse()
			})
		}
		t.Run("grpc-go/"+addr, func(t *testing.T) {
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			resp, err := echov1.NewEchoClient(cc).Get(t.Context(), &echov1.EchoRequest{Text: "hi"})
			if err != nil || resp.GetText() != "hi" {
				t.Fatalf("Get: %v, %v", resp, err)
			}
			health, err := healthpb.NewHealthClient(cc).Check(t.Context(), &healthpb.HealthCheckRequest{Service: echov1connect.EchoName})
			if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("health: %v, %v", health, err)
			}
			if _, err := healthpb.NewHealthClient(cc).Check(t.Context(), &healthpb.HealthCheckRequest{Service: "nosuch.Service"}); status.Code(err) != codes.NotFound {
				t.Errorf("health of an unknown service: %v", err)
			}
			names, err := echotest.ListServices(t.Context(), cc)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"echo.v1.Echo", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}; !slices.Equal(names, want) {
				t.Errorf("reflection lists %q, want %q, as grpc-go's does", names, want)
			}
		})
	}
}

// A bad address among good ones: Listen names it and nothing listens.
func TestListenRejects(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sock")
	notSocket := filepath.Join(dir, "file")
	if err := os.WriteFile(notSocket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := connectserve.New(nil, 0o600)
	err := srv.Listen("unix:"+good, "unix:"+notSocket, "inproc:x", "127.0.0.1:99999")
	if err == nil {
		t.Fatal("Listen accepted bad addresses")
	}
	for _, want := range []string{"exists and is not a socket", "in-process address", "99999"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if _, err := os.Stat(good); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the good socket was left behind: %v", err)
	}
}

// newEcho returns a Server of Echo.
func newEcho() *connectserve.Server {
	path, handler := echov1connect.NewEchoHandler(echoconnect.Server{})
	return connectserve.New([]connectserve.Service{{Name: echov1connect.EchoName, Path: path, Handler: handler}}, 0o600)
}

// A call made between Listen and Serve waits, and succeeds once Serve
// serves; Serve ends with its context, as localgrpc.Server's does.
func TestListenThenServe(t *testing.T) {
	srv := newEcho()
	if err := srv.Listen(socketAddrs(t)...); err != nil {
		t.Fatal(err)
	}
	calls := make(chan error, len(srv.Addrs()))
	for _, addr := range srv.Addrs() {
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		if _, err := echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{}); status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("%s: a call before Serve: %v, want DeadlineExceeded", addr, err)
		}
		cancel()
		go func() {
			_, err := echov1.NewEchoClient(cc).Get(t.Context(), &echov1.EchoRequest{})
			calls <- err
		}()
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	for range srv.Addrs() {
		if err := <-calls; err != nil {
			t.Errorf("a call made before Serve: %v", err)
		}
	}
	stop()
	if err := <-served; err != nil {
		t.Errorf("Serve after its context ended: %v", err)
	}
}

// Listen and Serve called wrongly say so.
func TestListenServeMisuse(t *testing.T) {
	shut := func() *connectserve.Server {
		s := newEcho()
		s.Shutdown(context.Background())
		return s
	}
	serving := newEcho()
	if err := serving.Listen("unix:@localgrpc-test-" + rand.Text()); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serving.Serve(context.Background()) }()
	defer func() {
		serving.Shutdown(context.Background())
		<-served
	}()
	// A call is answered once Serve serves.
	cc, err := localgrpc.NewClient(serving.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := echov1.NewEchoClient(cc).Get(t.Context(), &echov1.EchoRequest{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		err  error
		want string
		is   error
	}{
		{"listen-nothing", newEcho().Listen(), "at least one address", nil},
		{"serve-nothing", newEcho().Serve(context.Background()), "nothing to serve", nil},
		{"serve-twice", serving.Serve(context.Background()), "already called", nil},
		{"serve-after-shutdown", shut().Serve(context.Background()), "", http.ErrServerClosed},
		{"listen-after-shutdown", shut().Listen("unix:@localgrpc-test-" + rand.Text()), "", http.ErrServerClosed},
	} {
		switch {
		case tc.err == nil:
			t.Errorf("%s: no error", tc.name)
		case tc.is != nil && !errors.Is(tc.err, tc.is):
			t.Errorf("%s: %v, want an error wrapping %v", tc.name, tc.err, tc.is)
		case !strings.Contains(tc.err.Error(), tc.want):
			t.Errorf("%s: %v, want an error saying %q", tc.name, tc.err, tc.want)
		}
	}
}

// Every service reflection lists reports SERVING, as on localgrpc.Server,
// and NOT_SERVING to a watcher once Shutdown begins.
func TestHealthByService(t *testing.T) {
	srv := newEcho()
	if err := srv.Listen("unix:@localgrpc-test-" + rand.Text()); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	cc, err := localgrpc.NewClient(srv.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	health, err := echotest.HealthOfEveryService(t.Context(), cc)
	if err != nil {
		t.Fatal(err)
	}
	for name, st := range health {
		if st != "SERVING" {
			t.Errorf("service %q is %s, want SERVING", name, st)
		}
	}
	watchCtx, endWatch := context.WithCancel(t.Context())
	w, err := healthpb.NewHealthClient(cc).Watch(watchCtx, &healthpb.HealthCheckRequest{Service: echov1connect.EchoName})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("watch: %v, %v", r, err)
	}
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(t.Context()) }()
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("watch while shutting down: %v, %v; want NOT_SERVING", r, err)
	}
	endWatch()
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// Every address Addrs reports parses back to itself, whatever form of the
// grammar Listen was given, and can be dialed.
func TestAddrsParseBack(t *testing.T) {
	addrs := serveEcho(t,
		"unix-abstract:localgrpc-test-"+rand.Text(),
		"unix:///"+filepath.Join(t.TempDir(), "s.sock"),
		":0",
	)
	for _, addr := range addrs {
		a, err := localgrpc.ParseAddress(addr)
		if err != nil || a.String() != addr {
			t.Errorf("Addrs() reports %q, which parses as %q, %v", addr, a, err)
			continue
		}
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := echov1.NewEchoClient(cc).Get(t.Context(), &echov1.EchoRequest{}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
		cc.Close()
	}
}
