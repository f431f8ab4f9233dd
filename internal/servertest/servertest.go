// Package servertest holds what tests of a localgrpc Server share, in
// this module and in the CLI's: a Server of Echo serving until the test
// ends, clients, and one call of each kind.
package servertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
)

// WaitLimit bounds every wait of these tests.
const WaitLimit = 10 * time.Second

// ReceiveWithin returns the next value of c, failing the test if none
// comes within d.
func ReceiveWithin[T any](t testing.TB, c <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(d):
		t.Fatalf("timed out after %v waiting for %s", d, what)
		panic("unreachable")
	}
}

// TimeoutCtx is the test's context, ending after WaitLimit.
func TimeoutCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), WaitLimit)
	t.Cleanup(cancel)
	return ctx
}

// UniqueName is a name no other test, and no other run, uses.
func UniqueName() string {
	return fmt.Sprintf("localgrpc-test-%d-%08x", os.Getpid(), rand.Uint32())
}

// SocketPath is a fresh unix socket path in the test's directory.
func SocketPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "s.sock")
}

// Serve has srv listen on addrs and serve them until the test ends, when
// it stops srv and waits for Serve to return. With no addrs, srv listens
// already (Listen, AddListener).
func Serve(t testing.TB, srv *localgrpc.Server, addrs ...string) {
	t.Helper()
	if len(addrs) > 0 {
		if err := srv.Listen(addrs...); err != nil {
			t.Fatalf("Listen(%q): %v", addrs, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("Serve returned %v after Stop", err)
		}
	})
}

// NewEchoServer is a Server of echo.Server with opts.
func NewEchoServer(opts ...localgrpc.ServerOption) *localgrpc.Server {
	srv := localgrpc.NewServer(opts...)
	echov1.RegisterEchoServer(srv, echo.Server{})
	return srv
}

// Dial is an Echo client of addr, closed when the test ends.
func Dial(t *testing.T, addr string, opts ...localgrpc.ClientOption) echov1.EchoClient {
	t.Helper()
	cc, err := localgrpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", addr, err)
	}
	t.Cleanup(func() { cc.Close() })
	return echov1.NewEchoClient(cc)
}

// EchoCalls make each kind of Echo call and return the texts that came
// back.
var EchoCalls = []struct {
	Name string
	Call func(ctx context.Context, c echov1.EchoClient) ([]string, error)
	Want []string
}{
	{"unary", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: "hello"})
		return []string{r.GetText()}, err
	}, []string{"hello"}},
	{"server-stream", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
		s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "a b c"})
		if err != nil {
			return nil, err
		}
		return echotest.RecvAll(s.Recv)
	}, []string{"a", "b", "c"}},
	{"client-stream", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
		s, err := c.Collect(ctx)
		if err != nil {
			return nil, err
		}
		for _, w := range []string{"x", "y"} {
			if err := s.Send(&echov1.EchoRequest{Text: w}); errors.Is(err, io.EOF) {
				break // the server ended the call: CloseAndRecv has its status
			} else if err != nil {
				return nil, err
			}
		}
		r, err := s.CloseAndRecv()
		return []string{r.GetText()}, err
	}, []string{"x y"}},
	{"bidi", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
		s, err := c.Update(ctx)
		if err != nil {
			return nil, err
		}
		var got []string
		for _, w := range []string{"p", "q"} {
			// Send's io.EOF means the server ended the call; as grpc-go
			// documents, Recv then returns its status.
			if err := s.Send(&echov1.EchoRequest{Text: w}); err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			r, err := s.Recv()
			if err != nil {
				return nil, err
			}
			got = append(got, r.GetText())
		}
		if err := s.CloseSend(); err != nil {
			return nil, err
		}
		rest, err := echotest.RecvAll(s.Recv)
		return append(got, rest...), err
	}, []string{"p", "q"}},
}

// TransportName names the transport of addr, as a subtest name.
func TransportName(addr string) string {
	switch {
	case strings.HasPrefix(addr, "inproc:"):
		return "transport=inproc"
	case strings.HasPrefix(addr, "unix:@"):
		return "transport=abstract"
	case strings.HasPrefix(addr, "unix:"):
		return "transport=unix"
	case strings.HasPrefix(addr, "shm:@"):
		return "transport=shm-abstract"
	case strings.HasPrefix(addr, "shm:"):
		return "transport=shm"
	}
	return "transport=tcp"
}
