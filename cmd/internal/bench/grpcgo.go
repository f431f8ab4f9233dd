package bench

import (
	"context"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// serveTCP is impl "localhost": grpc-go over TCP on the loopback address.
func serveTCP(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serveGRPC(tb, srv, lis, lis.Addr().String())
}

// serveUnix is impl "unix": grpc-go over a unix socket in a fresh
// directory. The directory is short-lived and short-named because socket
// paths are limited to about 100 bytes.
func serveUnix(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	dir, err := os.MkdirTemp("", "localgrpc-bench-")
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { os.RemoveAll(dir) }) // runs after the server stops
	path := filepath.Join(dir, "s.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	return serveGRPC(tb, srv, lis, "unix:"+path)
}

// serveAbstract is impl "abstract": grpc-go over a Linux abstract unix
// socket, which has no file to remove. The random name keeps concurrent
// runs (and other programs) apart.
func serveAbstract(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	name := "localgrpc-bench-" + rand.Text()
	lis, err := net.Listen("unix", "@"+name)
	if err != nil {
		return nil, err
	}
	return serveGRPC(tb, srv, lis, "unix-abstract:"+name)
}

// serveBufconn is impl "bufconn": grpc-go over grpc-go's in-memory
// listener, the whole HTTP/2 stack without the kernel.
func serveBufconn(tb testing.TB, srv servers) (grpc.ClientConnInterface, error) {
	lis := bufconn.Listen(1 << 20)
	dial := func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	return serveGRPC(tb, srv, lis, "passthrough:///bufconn", grpc.WithContextDialer(dial))
}

// serveGRPC serves srv with a grpc-go server on lis and returns a client
// connection to target, which reaches lis. In tb.Cleanup the connection
// closes, then the server stops and Serve's goroutine is waited for, so
// nothing outlives the case.
func serveGRPC(tb testing.TB, srv servers, lis net.Listener, target string, opts ...grpc.DialOption) (grpc.ClientConnInterface, error) {
	s := grpc.NewServer(grpc.Creds(insecure.NewCredentials()))
	srv.registerOn(s)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.Serve(lis) // returns nil once Stop is called
	}()
	tb.Cleanup(func() {
		s.Stop()
		<-served
	})

	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	cc, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, err
	}
	tb.Cleanup(func() { _ = cc.Close() })
	return cc, nil
}
