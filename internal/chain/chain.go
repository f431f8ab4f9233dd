// Package chain composes gRPC interceptors into one, in the order grpc-go
// runs them: the first one given is the outermost. A nil result means no
// interceptor, so callers skip the indirection.
package chain

import (
	"context"

	"google.golang.org/grpc"
)

// UnaryServer chains is into one interceptor, nil if is is empty.
func UnaryServer(is []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	if len(is) == 0 {
		return nil
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		for i := len(is) - 1; i > 0; i-- {
			next, h := is[i], handler
			handler = func(ctx context.Context, req any) (any, error) { return next(ctx, req, info, h) }
		}
		return is[0](ctx, req, info, handler)
	}
}

// StreamServer chains is into one interceptor, nil if is is empty.
func StreamServer(is []grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	if len(is) == 0 {
		return nil
	}
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		for i := len(is) - 1; i > 0; i-- {
			next, h := is[i], handler
			handler = func(srv any, ss grpc.ServerStream) error { return next(srv, ss, info, h) }
		}
		return is[0](srv, ss, info, handler)
	}
}

// UnaryClient chains is into one interceptor, nil if is is empty.
func UnaryClient(is []grpc.UnaryClientInterceptor) grpc.UnaryClientInterceptor {
	if len(is) == 0 {
		return nil
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		for i := len(is) - 1; i > 0; i-- {
			next, inv := is[i], invoker
			invoker = func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
				return next(ctx, method, req, reply, cc, inv, opts...)
			}
		}
		return is[0](ctx, method, req, reply, cc, invoker, opts...)
	}
}

// StreamClient chains is into one interceptor, nil if is is empty.
func StreamClient(is []grpc.StreamClientInterceptor) grpc.StreamClientInterceptor {
	if len(is) == 0 {
		return nil
	}
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		for i := len(is) - 1; i > 0; i-- {
			next, s := is[i], streamer
			streamer = func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				return next(ctx, desc, cc, method, s, opts...)
			}
		}
		return is[0](ctx, desc, cc, method, streamer, opts...)
	}
}
