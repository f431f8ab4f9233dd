package inproc

import (
	"github.com/localgrpc/localgrpc/inproc/internal/handover"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// An Option configures a Channel.
type Option func(*config)

type config struct {
	copy               CopyMode
	execution          Execution
	window             int
	windowBytes        int
	serverMaxRecv      int
	serverMaxSend      int
	unaryInterceptors  []grpc.UnaryServerInterceptor
	streamInterceptors []grpc.StreamServerInterceptor
	clientUnary        []grpc.UnaryClientInterceptor
	clientStream       []grpc.StreamClientInterceptor
	serverStats        []stats.Handler
	clientStats        []stats.Handler
	defaultCallOptions []grpc.CallOption
}

// The window of each direction of a stream, unless WithWindow and
// WithWindowBytes say otherwise.
const (
	// DefaultWindow is how many messages a stream buffers per direction.
	DefaultWindow = 64
	// DefaultWindowBytes is how many bytes of encoded messages a stream
	// buffers per direction.
	// grpc-go starts a stream's HTTP/2 window at 64 KiB.
	// It lets the window grow to 16 MiB as it measures the connection.
	// 1 MiB keeps a stream of small messages at its message window, and holds
	// large ones to a few.
	DefaultWindowBytes = 1 << 20
)

func newConfig(opts []Option) config {
	c := config{copy: Clone, execution: Isolated, window: DefaultWindow, windowBytes: DefaultWindowBytes,
		serverMaxRecv: handover.DefaultMaxRecvMsgSize, serverMaxSend: handover.DefaultMaxSendMsgSize}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithCopy sets how messages pass from sender to receiver: Clone (the
// default) or Share.
// The CallCopy call option overrides it for one call.
func WithCopy(mode CopyMode) Option {
	return func(c *config) { c.copy = mode }
}

// WithExecution sets where handlers run: Isolated (the default) or Inline.
func WithExecution(e Execution) Option {
	return func(c *config) { c.execution = e }
}

// WithWindow sets how many messages each stream buffers in each direction
// before the sender's SendMsg blocks. Values below 1 mean 1.
func WithWindow(n int) Option {
	return func(c *config) { c.window = max(n, 1) }
}

// WithWindowBytes sets how many bytes of messages, as encoded, each stream
// buffers in each direction before the sender's SendMsg blocks.
// A message larger than the window passes alone.
// Values below 1 mean 1.
func WithWindowBytes(n int) Option {
	return func(c *config) { c.windowBytes = max(n, 1) }
}

// WithServerMaxRecvMsgSize sets the largest request, encoded, that handlers
// accept, as grpc.MaxRecvMsgSize does for a grpc.Server.
// A larger one fails the call with ResourceExhausted.
// The default is grpc-go's, 4 MiB.
func WithServerMaxRecvMsgSize(n int) Option {
	return func(c *config) { c.serverMaxRecv = n }
}

// WithServerMaxSendMsgSize sets the largest response, encoded, that
// handlers may send, as grpc.MaxSendMsgSize does for a grpc.Server.
// A larger one fails the handler's Send with ResourceExhausted.
// The default is grpc-go's, math.MaxInt32.
func WithServerMaxSendMsgSize(n int) Option {
	return func(c *config) { c.serverMaxSend = n }
}

// WithServerUnaryInterceptor appends server-side unary interceptors.
// The first interceptor of the whole chain is the outermost, as with
// grpc.ChainUnaryInterceptor.
func WithServerUnaryInterceptor(i ...grpc.UnaryServerInterceptor) Option {
	return func(c *config) { c.unaryInterceptors = append(c.unaryInterceptors, i...) }
}

// WithServerStreamInterceptor appends server-side stream interceptors, outermost
// first, as with grpc.ChainStreamInterceptor.
func WithServerStreamInterceptor(i ...grpc.StreamServerInterceptor) Option {
	return func(c *config) { c.streamInterceptors = append(c.streamInterceptors, i...) }
}

// WithClientUnaryInterceptor appends client-side unary interceptors,
// outermost first, as with grpc.WithChainUnaryInterceptor.
// The interceptors receive a nil *grpc.ClientConn: a Channel is not one.
func WithClientUnaryInterceptor(i ...grpc.UnaryClientInterceptor) Option {
	return func(c *config) { c.clientUnary = append(c.clientUnary, i...) }
}

// WithClientStreamInterceptor appends client-side stream interceptors,
// outermost first, as with grpc.WithChainStreamInterceptor.
// The interceptors receive a nil *grpc.ClientConn.
func WithClientStreamInterceptor(i ...grpc.StreamClientInterceptor) Option {
	return func(c *config) { c.clientStream = append(c.clientStream, i...) }
}

// WithDefaultCallOptions sets call options that every call on the channel
// gets before its own.
// It does what grpc.WithDefaultCallOptions does for a grpc.ClientConn:
//   - A call's own options come after them, and win where both set the same
//     thing.
//   - Client interceptors see both.
func WithDefaultCallOptions(opts ...grpc.CallOption) Option {
	return func(c *config) { c.defaultCallOptions = append(c.defaultCallOptions, opts...) }
}

// WithServerStatsHandler adds a stats.Handler that sees every call from the
// server's side, as grpc.StatsHandler does for a grpc.Server.
func WithServerStatsHandler(h stats.Handler) Option {
	return func(c *config) { c.serverStats = append(c.serverStats, h) }
}

// WithClientStatsHandler adds a stats.Handler that sees every call from the
// client's side, as grpc.WithStatsHandler does for a grpc.ClientConn.
// A call whose context has ended when it is made reports nothing.
// grpc-go likewise fails it before it begins.
func WithClientStatsHandler(h stats.Handler) Option {
	return func(c *config) { c.clientStats = append(c.clientStats, h) }
}
