package localgrpc

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// The options below configure the grpc.Server of unix: and TCP addresses.
// Each is one grpc-go server option of the same name.
// In-process and shm: calls have no HTTP/2 connection, so these options do
// not concern them.
// Unlike options given through [WithGRPCServerOptions], they leave a
// Server free to serve in-process and shm: addresses.

// socketOption adds o to the options of the socket transports.
func socketOption(o grpc.ServerOption) ServerOption {
	return func(c *serverConfig) { c.socket = append(c.socket, o) }
}

// WithServerKeepaliveParams sets keepalive and connection age parameters, as
// grpc.KeepaliveParams does, on sockets.
func WithServerKeepaliveParams(p keepalive.ServerParameters) ServerOption {
	return socketOption(grpc.KeepaliveParams(p))
}

// WithServerKeepaliveEnforcementPolicy sets how often clients may ping, as
// grpc.KeepaliveEnforcementPolicy does, on sockets.
func WithServerKeepaliveEnforcementPolicy(p keepalive.EnforcementPolicy) ServerOption {
	return socketOption(grpc.KeepaliveEnforcementPolicy(p))
}

// WithServerInitialWindowSize sets the HTTP/2 window of each stream, as
// grpc.InitialWindowSize does, on sockets.
func WithServerInitialWindowSize(n int32) ServerOption {
	return socketOption(grpc.InitialWindowSize(n))
}

// WithServerInitialConnWindowSize sets the HTTP/2 window of each
// connection, as grpc.InitialConnWindowSize does, on sockets.
func WithServerInitialConnWindowSize(n int32) ServerOption {
	return socketOption(grpc.InitialConnWindowSize(n))
}

// WithServerReadBufferSize sets the read buffer of each connection, as
// grpc.ReadBufferSize does, on sockets.
func WithServerReadBufferSize(n int) ServerOption {
	return socketOption(grpc.ReadBufferSize(n))
}

// WithServerWriteBufferSize sets the write buffer of each connection, as
// grpc.WriteBufferSize does, on sockets.
func WithServerWriteBufferSize(n int) ServerOption {
	return socketOption(grpc.WriteBufferSize(n))
}

// WithServerSharedWriteBuffer lets connections release their write buffer
// between writes, as grpc.SharedWriteBuffer does, on sockets.
func WithServerSharedWriteBuffer(shared bool) ServerOption {
	return socketOption(grpc.SharedWriteBuffer(shared))
}

// WithServerMaxConcurrentStreams bounds the streams of each connection, as
// grpc.MaxConcurrentStreams does, on sockets.
// In-process calls are not counted against it.
func WithServerMaxConcurrentStreams(n uint32) ServerOption {
	return socketOption(grpc.MaxConcurrentStreams(n))
}

// WithServerConnectionTimeout bounds the handshake of each new connection,
// as grpc.ConnectionTimeout does, on sockets.
func WithServerConnectionTimeout(d time.Duration) ServerOption {
	return socketOption(grpc.ConnectionTimeout(d))
}

// WithServerNumStreamWorkers serves streams on a pool of n goroutines, as
// grpc.NumStreamWorkers does, on sockets.
func WithServerNumStreamWorkers(n uint32) ServerOption {
	return socketOption(grpc.NumStreamWorkers(n))
}

// WithServerHeaderTableSize sets the HPACK dynamic table size the server
// uses to encode headers, as grpc.HeaderTableSize does, on sockets.
func WithServerHeaderTableSize(n uint32) ServerOption {
	return socketOption(grpc.HeaderTableSize(n))
}
