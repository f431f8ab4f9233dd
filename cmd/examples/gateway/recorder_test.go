package gateway_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// A handled call is what a server interceptor saw of one call.
type handled struct {
	method   string
	md       metadata.MD
	deadline time.Time // zero without one
	// err is the call's context's error once the handler returned: nil
	// for a call that ran to its end, Canceled or DeadlineExceeded for
	// one cut short.
	err error
	// handlerErr is what the handler returned.
	handlerErr error
}

// A recorder is a server's unary and stream interceptors, which send
// every call they see on calls once its handler returned.
type recorder struct {
	calls chan handled
}

func newRecorder() *recorder {
	// Roomy enough that no test's calls block a handler's return.
	return &recorder{calls: make(chan handled, 64)}
}

// options are the server options that install the recorder.
func (r *recorder) options() []localgrpc.ServerOption {
	return []localgrpc.ServerOption{
		localgrpc.WithServerUnaryInterceptor(r.unary),
		localgrpc.WithServerStreamInterceptor(r.stream),
	}
}

func (r *recorder) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	h := begin(ctx, info.FullMethod)
	resp, err := handler(ctx, req)
	r.end(ctx, h)
	return resp, err
}

func (r *recorder) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	h := begin(ss.Context(), info.FullMethod)
	err := handler(srv, ss)
	h.handlerErr = err
	r.end(ss.Context(), h)
	return err
}

// next is the next call the interceptors saw end. A test fails if none
// ends within servertest.WaitLimit, which leaves a busy machine room.
func (r *recorder) next(t *testing.T) handled {
	t.Helper()
	select {
	case h := <-r.calls:
		return h
	case <-time.After(servertest.WaitLimit):
		t.Fatalf("no call ended within %v", servertest.WaitLimit)
		return handled{}
	}
}

func begin(ctx context.Context, method string) handled {
	md, _ := metadata.FromIncomingContext(ctx)
	deadline, _ := ctx.Deadline()
	return handled{method: method, md: md.Copy(), deadline: deadline}
}

func (r *recorder) end(ctx context.Context, h handled) {
	h.err = ctx.Err()
	r.calls <- h
}

// countUnary and countStream are client interceptors that count the
// calls they see in n.
func countUnary(n *atomic.Int64) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		n.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

func countStream(n *atomic.Int64) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		n.Add(1)
		return streamer(ctx, desc, cc, method, opts...)
	}
}
