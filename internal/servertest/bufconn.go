package servertest

import (
	"context"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// GRPCOverBufconn serves what register registers on a grpc.Server with
// sopts over bufconn and returns a connection to it with dopts: grpc-go as
// the oracle that in-process calls are compared with. Both end with the
// test.
func GRPCOverBufconn(t testing.TB, register func(grpc.ServiceRegistrar), sopts []grpc.ServerOption, dopts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	_, cc := GRPCServerOverBufconn(t, register, sopts, dopts...)
	return cc
}

// GRPCServerOverBufconn is GRPCOverBufconn that returns the server too,
// for a test that stops it.
func GRPCServerOverBufconn(t testing.TB, register func(grpc.ServiceRegistrar), sopts []grpc.ServerOption, dopts ...grpc.DialOption) (*grpc.Server, *grpc.ClientConn) {
	t.Helper()
	return overBufconn(t, register, sopts, nil, dopts)
}

// GRPCOverWrappedBufconn is GRPCOverBufconn whose client uses what wrap
// makes of each connection it dials: a test may watch the transport's
// reads and writes.
func GRPCOverWrappedBufconn(t testing.TB, register func(grpc.ServiceRegistrar), sopts []grpc.ServerOption, wrap func(net.Conn) net.Conn, dopts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	_, cc := overBufconn(t, register, sopts, wrap, dopts)
	return cc
}

func overBufconn(t testing.TB, register func(grpc.ServiceRegistrar), sopts []grpc.ServerOption, wrap func(net.Conn) net.Conn, dopts []grpc.DialOption) (*grpc.Server, *grpc.ClientConn) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(sopts...)
	register(srv)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(lis) })
	dopts = append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			nc, err := lis.DialContext(ctx)
			if err == nil && wrap != nil {
				nc = wrap(nc)
			}
			return nc, err
		}),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, dopts...)
	cc, err := grpc.NewClient("passthrough:///bufconn", dopts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc.Close()
		srv.Stop()
		wg.Wait()
	})
	return srv, cc
}
