package localgrpc

import (
	"io/fs"
	"log/slog"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/stats"
)

// A ServerOption configures a Server.
type ServerOption func(*serverConfig)

type serverConfig struct {
	inproc     []inproc.Option
	grpc       []grpc.ServerOption // WithGRPCServerOptions'
	socket     []grpc.ServerOption // the socket options'
	creds      credentials.TransportCredentials
	unary      []grpc.UnaryServerInterceptor
	stream     []grpc.StreamServerInterceptor
	stats      []stats.Handler
	limits     []sizeLimit
	socketMode fs.FileMode
	peers      *peerPolicy
	health     bool
	reflection bool
	logger     *slog.Logger
	shmSpin    int // WithShmSpin's
}

func newServerConfig(opts []ServerOption) serverConfig {
	cfg := serverConfig{socketMode: 0o600, logger: slog.Default(), creds: insecure.NewCredentials()}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithInprocOptions passes options to the in-process channel that serves
// inproc: addresses, such as [inproc.WithCopy] and [inproc.WithExecution].
func WithInprocOptions(opts ...inproc.Option) ServerOption {
	return func(c *serverConfig) { c.inproc = append(c.inproc, opts...) }
}

// WithGRPCServerOptions passes options to the [grpc.Server] that serves
// unix: and TCP addresses.
// In-process and shm: calls never see them, and localgrpc cannot tell what
// they change.
// So with any of them [Server.Listen] refuses in-process and shm:
// addresses, and says what to use instead:
//   - interceptors, stats handlers and size limits: the Server's own
//     options, such as [WithServerUnaryInterceptor] and
//     [WithServerMaxRecvMsgSize], which apply on every transport;
//   - keepalive, HTTP/2 window, buffer, stream and connection settings:
//     the socket options, such as [WithServerKeepaliveParams], which leave
//     in-process addresses alone;
//   - transport credentials: [WithTransportCredentials].
//
// grpc-go's global server options (csm.EnableObservability registers
// some) count as given here.
// grpc.Creds given here replaces the server's own credentials.
// With [WithPeerCredentials] every socket call is then denied, since the
// policy cannot check it.
func WithGRPCServerOptions(opts ...grpc.ServerOption) ServerOption {
	return func(c *serverConfig) { c.grpc = append(c.grpc, opts...) }
}

// WithTransportCredentials sets the transport credentials of every socket
// connection, unix and TCP alike, as grpc.Creds does for a grpc.Server.
// The default is insecure.
// Unlike grpc.Creds given through [WithGRPCServerOptions], they compose
// with [WithPeerCredentials].
// On unix and abstract sockets, the peer's kernel credentials are read and
// checked beside their handshake.
//
// A handler's peer.AuthInfo depends on the socket:
//   - On unix and abstract sockets it is the server's own.
//     It carries creds' security level, so credentials.CheckSecurityLevel
//     works.
//     Its Unwrap method returns the AuthInfo of creds' handshake.
//   - On TCP it is creds' AuthInfo itself.
//
// In-process calls have no transport and use no credentials.
//
// WithTransportCredentials(nil) panics: a server meant to be secured must
// not start insecure.
func WithTransportCredentials(creds credentials.TransportCredentials) ServerOption {
	if creds == nil {
		panic("localgrpc: WithTransportCredentials(nil): give transport credentials, such as insecure.NewCredentials()")
	}
	return func(c *serverConfig) { c.creds = creds }
}

// WithServerUnaryInterceptor adds unary server interceptors, on every
// transport.
// The first is outermost.
func WithServerUnaryInterceptor(ints ...grpc.UnaryServerInterceptor) ServerOption {
	return func(c *serverConfig) { c.unary = append(c.unary, ints...) }
}

// WithServerStreamInterceptor adds stream server interceptors, on every
// transport.
// The first is outermost.
func WithServerStreamInterceptor(ints ...grpc.StreamServerInterceptor) ServerOption {
	return func(c *serverConfig) { c.stream = append(c.stream, ints...) }
}

// WithServerStatsHandler adds a server stats handler, on every transport.
func WithServerStatsHandler(h stats.Handler) ServerOption {
	return func(c *serverConfig) { c.stats = append(c.stats, h) }
}

// WithServerMaxRecvMsgSize sets the largest request, encoded, that the
// server accepts, on every transport.
// It is grpc.MaxRecvMsgSize for sockets, and
// [inproc.WithServerMaxRecvMsgSize] in-process.
// A larger request fails with ResourceExhausted.
// The default is grpc-go's, 4 MiB.
func WithServerMaxRecvMsgSize(n int) ServerOption {
	return func(c *serverConfig) { c.limits = append(c.limits, sizeLimit{recv: true, n: n}) }
}

// WithServerMaxSendMsgSize sets the largest response, encoded, that
// handlers may send, on every transport.
// It is grpc.MaxSendMsgSize for sockets, and
// [inproc.WithServerMaxSendMsgSize] in-process.
// A larger one fails with ResourceExhausted.
// The default is grpc-go's, math.MaxInt32.
func WithServerMaxSendMsgSize(n int) ServerOption {
	return func(c *serverConfig) { c.limits = append(c.limits, sizeLimit{n: n}) }
}

// A sizeLimit is a message size limit for every transport.
type sizeLimit struct {
	recv bool // false: send
	n    int
}

// options are the limit as options of each transport.
func (l sizeLimit) options() (grpc.ServerOption, inproc.Option) {
	if l.recv {
		return grpc.MaxRecvMsgSize(l.n), inproc.WithServerMaxRecvMsgSize(l.n)
	}
	return grpc.MaxSendMsgSize(l.n), inproc.WithServerMaxSendMsgSize(l.n)
}

// WithSocketMode sets the file mode of the unix sockets the server creates.
// The default, 0600, lets only the server's user connect.
func WithSocketMode(mode fs.FileMode) ServerOption {
	return func(c *serverConfig) { c.socketMode = mode.Perm() }
}

// WithHealth registers grpc-go's health service (grpc.health.v1.Health).
// It reports SERVING for the server as a whole (the service "").
// It reports SERVING for every registered service, the health service
// itself included.
// When the server stops or begins to drain, every service reports
// NOT_SERVING.
// Until then, [Server.SetServingStatus] changes a service's status.
func WithHealth() ServerOption {
	return func(c *serverConfig) { c.health = true }
}

// WithReflection registers grpc-go's reflection service, so tools such as
// grpcurl can list and call the services.
func WithReflection() ServerOption {
	return func(c *serverConfig) { c.reflection = true }
}

// WithLogger sets where the server logs what it refuses, such as a socket
// client its PeerPolicy denies.
// The default is slog.Default().
func WithLogger(l *slog.Logger) ServerOption {
	return func(c *serverConfig) { c.logger = l }
}
