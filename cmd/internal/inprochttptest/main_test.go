package inprochttptest

import (
	"context"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/connectserve"
	"github.com/localgrpc/localgrpc/inprochttp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A transport reaches a connect-go handler: in-process through inprochttp,
// or over a unix socket, served as the CLI serves connect-go
// (connectserve, on an address bound by localgrpc.Listen) and reached
// through localgrpc.HTTPClient: the oracle.
type transport struct {
	name string
	// client returns an HTTP client of the Echo handler h and its base
	// URL. What it starts stops in tb.Cleanup.
	client func(tb testing.TB, h echov1connect.EchoHandler) (*http.Client, string)
}

var transports = []transport{{"inproc", inprocClient}, {"unix", unixClient}}

// inprocClient reaches h in-process; panics are logged to the test's log.
func inprocClient(tb testing.TB, h echov1connect.EchoHandler) (*http.Client, string) {
	mux := http.NewServeMux()
	mux.Handle(echov1connect.NewEchoHandler(h))
	logs := log.New(writerFunc(func(p []byte) (int, error) {
		tb.Logf("%s", p)
		return len(p), nil
	}), "", 0)
	return &http.Client{Transport: inprochttp.NewTransport(mux, inprochttp.WithErrorLog(logs))}, "http://localhost"
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func unixClient(tb testing.TB, h echov1connect.EchoHandler) (*http.Client, string) {
	dir, err := os.MkdirTemp("", "inprochttptest-") // short: socket paths are limited
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	path, handler := echov1connect.NewEchoHandler(h)
	srv := connectserve.New([]connectserve.Service{{Name: echov1connect.EchoName, Path: path, Handler: handler}}, 0o600)
	if err := srv.Listen("unix:" + filepath.Join(dir, "s.sock")); err != nil {
		tb.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	hc, base, err := localgrpc.HTTPClient(srv.Addrs()[0])
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		hc.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-served; err != nil {
			tb.Errorf("Serve: %v", err)
		}
	})
	return hc, base
}

// protocols are connect-go's, by name.
var protocols = []struct {
	name string
	opts []connect.ClientOption
}{
	{"connect", nil},
	{"grpc", []connect.ClientOption{connect.WithGRPC()}},
	{"grpcweb", []connect.ClientOption{connect.WithGRPCWeb()}},
}

// bound is how long anything the tests wait for may take: room for a busy
// machine, and still a failure rather than a hang.
const bound = 10 * time.Second
