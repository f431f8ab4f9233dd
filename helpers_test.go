package localgrpc_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
)

// The helpers of internal/servertest, by their short names here.
const waitLimit = servertest.WaitLimit

var echoCalls = servertest.EchoCalls

func timeoutCtx(t *testing.T) context.Context { return servertest.TimeoutCtx(t) }
func uniqueName(*testing.T) string            { return servertest.UniqueName() }
func socketPath(t *testing.T) string          { return servertest.SocketPath(t) }
func transportName(addr string) string        { return servertest.TransportName(addr) }

func serve(t *testing.T, srv *localgrpc.Server, addrs ...string) {
	t.Helper()
	servertest.Serve(t, srv, addrs...)
}

func newEchoServer(opts ...localgrpc.ServerOption) *localgrpc.Server {
	return servertest.NewEchoServer(opts...)
}

func dial(t *testing.T, addr string, opts ...localgrpc.ClientOption) echov1.EchoClient {
	t.Helper()
	return servertest.Dial(t, addr, opts...)
}

// discardLogger is for servers whose expected warnings would clutter the
// test's output.
var discardLogger = slog.New(slog.DiscardHandler)

// claimed reports whether a server of this process claims the in-process
// address addr: another server's Listen on it is refused. (A client of
// it is made whether or not one does, as a socket client is.)
func claimed(addr string) bool {
	probe := localgrpc.NewServer()
	defer probe.Stop()
	return probe.Listen(addr) != nil
}

// receive returns the next value of c, failing the test if none comes
// within waitLimit.
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	return servertest.ReceiveWithin(t, c, waitLimit, what)
}
