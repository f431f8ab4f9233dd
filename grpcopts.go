package localgrpc

import (
	"errors"
	_ "unsafe" // go:linkname, to see grpc-go's global server options

	"google.golang.org/grpc"
)

// grpcGlobalServerOptions are the options grpc.NewServer gives every
// grpc.Server before its own, as registered by
// stats/opentelemetry/csm.EnableObservability. grpc-go offers no exported
// way to see them. TestGlobalServerOptionRefusesInproc registers one and
// fails if this name no longer finds them.
//
//go:linkname grpcGlobalServerOptions google.golang.org/grpc.globalServerOptions
var grpcGlobalServerOptions []grpc.ServerOption

// errGlobalServerOptions refuses in-process and shm: addresses while
// grpc-go's global server options are registered.
var errGlobalServerOptions = errors.New("grpc-go's global server options (such as stats/opentelemetry/csm.EnableObservability's) apply to unix: and TCP addresses only, and localgrpc cannot tell what they change; give the same controls with the Server's own options, which apply on every transport, or serve no in-process or shm: address")

// errGRPCServerOptions refuses in-process and shm: addresses beside
// options given through WithGRPCServerOptions.
var errGRPCServerOptions = errors.New("options given through WithGRPCServerOptions configure the grpc.Server of unix: and TCP addresses only, and localgrpc cannot tell what they change, so in-process and shm: calls might skip them; " +
	"give interceptors, stats handlers and size limits with WithServerUnaryInterceptor, WithServerStreamInterceptor, WithServerStatsHandler, WithServerMaxRecvMsgSize and WithServerMaxSendMsgSize, which apply on every transport; " +
	"give keepalive, window, buffer, stream and connection settings with WithServerKeepaliveParams and the other socket options; " +
	"give grpc.InTapHandle, grpc.UnknownServiceHandler, grpc.ForceServerCodec, grpc.MaxHeaderListSize, grpc.Creds and binary loggers only to a Server with no in-process or shm: address")

// optionsNotInproc says why the grpc.Server's options keep a Server from
// serving in-process and shm: addresses; nil if nothing does.
func optionsNotInproc(opts []grpc.ServerOption) error {
	switch {
	case len(grpcGlobalServerOptions) > 0:
		return errGlobalServerOptions
	case len(opts) > 0:
		return errGRPCServerOptions
	}
	return nil
}
