package localgrpc

import (
	"io/fs"
	"log/slog"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// A ServerOption configures a Server.
type ServerOption func(*serverConfig)

type serverConfig struct {
	inproc     []inproc.Option
	grpc       []grpc.ServerOption
	unary      []grpc.UnaryServerInterceptor
	stream     []grpc.StreamServerInterceptor
	stats      []stats.Handler
	socketMode fs.FileMode
	peers      *peerPolicy
	health     bool
	reflection bool
	logger     *slog.Logger
}

func newServerConfig(opts []ServerOption) serverConfig {
	cfg := serverConfig{socketMode: 0o600, logger: slog.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithInprocOptions passes options to the in-process channel that serves
// inproc: addresses, such as inproc.WithCopy and inproc.WithExecution.
func WithInprocOptions(opts ...inproc.Option) ServerOption {
	return func(c *serverConfig) { c.inproc = append(c.inproc, opts...) }
}

// WithGRPCOptions passes options to the grpc.Server that serves socket and
// TCP addresses, such as grpc.MaxRecvMsgSize or transport credentials for
// TCP. Interceptors and stats handlers belong in WithUnaryInterceptor,
// WithStreamInterceptor and WithStatsHandler, which apply to every
// transport.
func WithGRPCOptions(opts ...grpc.ServerOption) ServerOption {
	return func(c *serverConfig) { c.grpc = append(c.grpc, opts...) }
}

// WithUnaryInterceptor adds unary server interceptors, on every transport;
// the first is outermost.
func WithUnaryInterceptor(ints ...grpc.UnaryServerInterceptor) ServerOption {
	return func(c *serverConfig) { c.unary = append(c.unary, ints...) }
}

// WithStreamInterceptor adds stream server interceptors, on every
// transport; the first is outermost.
func WithStreamInterceptor(ints ...grpc.StreamServerInterceptor) ServerOption {
	return func(c *serverConfig) { c.stream = append(c.stream, ints...) }
}

// WithStatsHandler adds a server stats handler, on every transport.
func WithStatsHandler(h stats.Handler) ServerOption {
	return func(c *serverConfig) { c.stats = append(c.stats, h) }
}

// WithSocketMode sets the file mode of the unix sockets the server
// creates; the default, 0600, lets only the server's user connect.
func WithSocketMode(mode fs.FileMode) ServerOption {
	return func(c *serverConfig) { c.socketMode = mode.Perm() }
}

// WithHealth registers grpc-go's health service (grpc.health.v1.Health),
// reporting SERVING while the server serves.
func WithHealth() ServerOption {
	return func(c *serverConfig) { c.health = true }
}

// WithReflection registers grpc-go's reflection service, so tools such as
// grpcurl can list and call the services.
func WithReflection() ServerOption {
	return func(c *serverConfig) { c.reflection = true }
}

// WithLogger sets where the server logs what it refuses, such as a socket
// client its PeerPolicy denies. The default is slog.Default().
func WithLogger(l *slog.Logger) ServerOption {
	return func(c *serverConfig) { c.logger = l }
}
