package main

import (
	"context"
	"log/slog"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The call logs of `serve -v`: one line per call, when it ends, with its
// method, status code and duration, on either stack.

func logCall(log *slog.Logger, stack, method string, start time.Time, code string) {
	log.Info("call", "stack", stack, "method", method, "code", code, "took", time.Since(start).Round(time.Microsecond))
}

func grpcUnaryLogger(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		logCall(log, "grpc", info.FullMethod, start, status.Code(err).String())
		return resp, err
	}
}

func grpcStreamLogger(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		logCall(log, "grpc", info.FullMethod, start, status.Code(err).String())
		return err
	}
}

// connectLogger logs the calls a connect-go handler serves.
type connectLogger struct{ log *slog.Logger }

func (l connectLogger) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		resp, err := next(ctx, req)
		logCall(l.log, "connect/"+req.Peer().Protocol, req.Spec().Procedure, start, connectCode(err))
		return resp, err
	}
}

func (l connectLogger) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next // handlers only
}

func (l connectLogger) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		err := next(ctx, conn)
		logCall(l.log, "connect/"+conn.Peer().Protocol, conn.Spec().Procedure, start, connectCode(err))
		return err
	}
}

// connectCode names err's code as grpc-go's codes do ("OK", "NotFound"),
// so that both stacks log alike; the two share the gRPC code numbers.
func connectCode(err error) string {
	if err == nil {
		return codes.OK.String()
	}
	return codes.Code(connect.CodeOf(err)).String()
}
