package localgrpc_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

// waitLimit bounds every wait of these tests.
const waitLimit = 10 * time.Second

func timeoutCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// uniqueName is a name no other test, and no other run, uses.
func uniqueName(t *testing.T) string {
	return fmt.Sprintf("localgrpc-test-%d-%08x", os.Getpid(), rand.Uint32())
}

// socketPath is a fresh unix socket path in the test's directory.
func socketPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "s.sock")
}

// serve has srv listen on addrs and serve them until the test ends, when
// it stops srv and waits for Serve to return.
func serve(t *testing.T, srv *localgrpc.Server, addrs ...string) {
	t.Helper()
	if err := srv.Listen(addrs...); err != nil {
		t.Fatalf("Listen(%q): %v", addrs, err)
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

func newEchoServer(opts ...localgrpc.ServerOption) *localgrpc.Server {
	srv := localgrpc.NewServer(opts...)
	echov1.RegisterEchoServer(srv, echo.Server{})
	return srv
}

func dial(t *testing.T, addr string, opts ...localgrpc.ClientOption) echov1.EchoClient {
	t.Helper()
	cc, err := localgrpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", addr, err)
	}
	t.Cleanup(func() { cc.Close() })
	return echov1.NewEchoClient(cc)
}

// discardLogger is for servers whose expected warnings would clutter the
// test's output.
var discardLogger = slog.New(slog.DiscardHandler)
