package connectserve

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// The gRPC health checking service, grpc.health.v1.Health.
const (
	healthService   = "grpc.health.v1.Health"
	healthCheckPath = "/" + healthService + "/Check"
	healthWatchPath = "/" + healthService + "/Watch"
)

// healthHandler serves grpc.health.v1.Health on connect-go from grpc-go's
// health.Server, which keeps the statuses and implements Check and Watch:
// one implementation of the protocol for both stacks.
func healthHandler(hs *health.Server, opts ...connect.HandlerOption) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(healthCheckPath, connect.NewUnaryHandler(healthCheckPath,
		func(ctx context.Context, req *connect.Request[healthpb.HealthCheckRequest]) (*connect.Response[healthpb.HealthCheckResponse], error) {
			resp, err := hs.Check(ctx, req.Msg)
			if err != nil {
				return nil, connectError(err)
			}
			return connect.NewResponse(resp), nil
		}, opts...))
	mux.Handle(healthWatchPath, connect.NewServerStreamHandler(healthWatchPath,
		func(ctx context.Context, req *connect.Request[healthpb.HealthCheckRequest], stream *connect.ServerStream[healthpb.HealthCheckResponse]) error {
			return connectError(hs.Watch(req.Msg, &watchStream{ctx: ctx, stream: stream}))
		}, opts...))
	return mux
}

// watchStream is the grpc-go server stream that health.Server's Watch
// sends on, carried by a connect-go stream. Watch only sends and reads the
// context; the header methods have nothing to carry.
type watchStream struct {
	ctx    context.Context
	stream *connect.ServerStream[healthpb.HealthCheckResponse]
}

var _ grpc.ServerStreamingServer[healthpb.HealthCheckResponse] = (*watchStream)(nil)

func (w *watchStream) Send(m *healthpb.HealthCheckResponse) error { return w.stream.Send(m) }
func (w *watchStream) Context() context.Context                   { return w.ctx }
func (w *watchStream) SetHeader(metadata.MD) error                { return nil }
func (w *watchStream) SendHeader(metadata.MD) error               { return nil }
func (w *watchStream) SetTrailer(metadata.MD)                     {}
func (w *watchStream) SendMsg(m any) error {
	return w.stream.Send(m.(*healthpb.HealthCheckResponse))
}
func (w *watchStream) RecvMsg(any) error { return nil }
