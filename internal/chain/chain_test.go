package chain_test

import (
	"context"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/internal/chain"
	"google.golang.org/grpc"
)

// TestOrder checks that the first interceptor is the outermost, as in
// grpc-go, for all four chains, and that no interceptors chain to nil.
func TestOrder(t *testing.T) {
	var got []string
	want := []string{"a in", "b in", "call", "b out", "a out"}
	note := func(s string) { got = append(got, s) }
	check := func(name string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: ran %q, want %q", name, got, want)
		}
		got = nil
	}

	us := func(n string) grpc.UnaryServerInterceptor {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			note(n + " in")
			defer note(n + " out")
			return h(ctx, req)
		}
	}
	chain.UnaryServer([]grpc.UnaryServerInterceptor{us("a"), us("b")})(context.Background(), nil, &grpc.UnaryServerInfo{},
		func(context.Context, any) (any, error) { note("call"); return nil, nil })
	check("UnaryServer")

	ss := func(n string) grpc.StreamServerInterceptor {
		return func(srv any, s grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			note(n + " in")
			defer note(n + " out")
			return h(srv, s)
		}
	}
	chain.StreamServer([]grpc.StreamServerInterceptor{ss("a"), ss("b")})(nil, nil, &grpc.StreamServerInfo{},
		func(any, grpc.ServerStream) error { note("call"); return nil })
	check("StreamServer")

	uc := func(n string) grpc.UnaryClientInterceptor {
		return func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			note(n + " in")
			defer note(n + " out")
			return inv(ctx, m, req, reply, cc, opts...)
		}
	}
	chain.UnaryClient([]grpc.UnaryClientInterceptor{uc("a"), uc("b")})(context.Background(), "/s/m", nil, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			note("call")
			return nil
		})
	check("UnaryClient")

	sc := func(n string) grpc.StreamClientInterceptor {
		return func(ctx context.Context, d *grpc.StreamDesc, cc *grpc.ClientConn, m string, st grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			note(n + " in")
			defer note(n + " out")
			return st(ctx, d, cc, m, opts...)
		}
	}
	chain.StreamClient([]grpc.StreamClientInterceptor{sc("a"), sc("b")})(context.Background(), &grpc.StreamDesc{}, nil, "/s/m",
		func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
			note("call")
			return nil, nil
		})
	check("StreamClient")

	if chain.UnaryServer(nil) != nil || chain.StreamServer(nil) != nil || chain.UnaryClient(nil) != nil || chain.StreamClient(nil) != nil {
		t.Error("an empty chain is not nil")
	}
}
