package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
)

// inFlight counts the calls a server of `serve` is handling, on either
// stack, so that a drain cut short by --drain-timeout can say how many
// calls it ended.
type inFlight struct{ n atomic.Int64 }

func (c *inFlight) grpcUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	c.n.Add(1)
	defer c.n.Add(-1)
	return handler(ctx, req)
}

func (c *inFlight) grpcStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	c.n.Add(1)
	defer c.n.Add(-1)
	return handler(srv, ss)
}

// connect is c as a connect-go interceptor.
func (c *inFlight) connect() connect.Interceptor { return connectInFlight{c} }

type connectInFlight struct{ c *inFlight }

func (i connectInFlight) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		i.c.n.Add(1)
		defer i.c.n.Add(-1)
		return next(ctx, req)
	}
}

func (i connectInFlight) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next // handlers only
}

func (i connectInFlight) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		i.c.n.Add(1)
		defer i.c.n.Add(-1)
		return next(ctx, conn)
	}
}

// logEnded logs that the drain timeout d ran out with calls in flight,
// which the server is about to end, and how many.
func (c *inFlight) logEnded(log *slog.Logger, d time.Duration) {
	log.Warn("drain timeout: ending the calls still in flight", "calls", c.n.Load(), "drain_timeout", d)
}
