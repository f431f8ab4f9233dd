package localgrpc

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// Server serves the services registered on it on any number of addresses at
// once.
// It serves inproc: addresses through one in-process channel.
// It serves all others (unix and abstract sockets, TCP) through one
// grpc.Server.
// Interceptors and stats handlers apply on every transport.
//
// A Server binds its addresses with [Server.Listen], or takes a listener of
// the caller's with [Server.AddListener].
// It then serves them with [Server.Serve] until [Server.Stop],
// [Server.GracefulStop] or the end of Serve's context.
// [Server.ListenAndServe] does both.
type Server struct {
	cfg     serverConfig
	grpc    *grpc.Server
	channel *inproc.Channel
	// notInproc says why an in-process address is refused: options given
	// through WithGRPCServerOptions, or grpc-go's global ones.
	notInproc error
	// notShm says why a shm: address is refused: notInproc's options, or
	// transport credentials, which the framing does not carry.
	notShm error
	shm    shmConns
	health *health.Server

	mu        sync.Mutex
	phase     phase
	stopping  atomic.Bool // phase is draining or stopped: clients look for a successor
	listeners []*listener // in the order bound; Inproc ones have no net.Listener
	// started is closed once Serve begins, or stopping does: in-process
	// calls wait for it, as socket clients wait to be accepted.
	started     chan struct{}
	neverServed atomic.Bool    // stopped while listening, before Serve
	done        chan struct{}  // closed once stopped
	failed      chan error     // the first listener grpc-go could not serve
	serving     sync.WaitGroup // grpc.Server.Serve, one per socket listener
}

// phase is where a Server is in its life; it only moves forward.
type phase uint8

const (
	listening phase = iota // before Serve: Listen binds, nothing is served
	serving                // Serve was called
	draining               // GracefulStop waits for the calls in flight
	stopped                // Stop was called, or the drain ended
)

var (
	_ grpc.ServiceRegistrar          = (*Server)(nil)
	_ reflection.ServiceInfoProvider = (*Server)(nil)
	_ reflection.GRPCServer          = (*Server)(nil)
)

// NewServer returns a Server with no services and no addresses.
func NewServer(opts ...ServerOption) *Server {
	cfg := newServerConfig(opts)
	s := &Server{cfg: cfg, started: make(chan struct{}), done: make(chan struct{}), failed: make(chan error, 1)}

	gopts := []grpc.ServerOption{grpc.Creds(&serverCreds{transport: cfg.creds, policy: cfg.peers, logger: cfg.logger})}
	unary, stream := cfg.unary, cfg.stream
	if cfg.peers != nil {
		// The tap runs as a stream arrives, before any interceptor, even
		// one given as grpc.UnaryInterceptor, which grpc-go puts before
		// every chained one: no code of the user's sees a denied call. (A
		// second tap given with WithGRPCServerOptions makes grpc-go panic
		// rather than replace this one.) The interceptors check again.
		check := &peerCheck{logger: cfg.logger}
		gopts = append(gopts, grpc.InTapHandle(check.tap))
		unary = append([]grpc.UnaryServerInterceptor{check.unary}, unary...)
		stream = append([]grpc.StreamServerInterceptor{check.stream}, stream...)
	}
	gopts = append(gopts, grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	iopts := []inproc.Option{inproc.WithServerUnaryInterceptor(cfg.unary...), inproc.WithServerStreamInterceptor(cfg.stream...)}
	for _, h := range cfg.stats {
		gopts = append(gopts, grpc.StatsHandler(h))
		iopts = append(iopts, inproc.WithServerStatsHandler(h))
	}
	for _, l := range cfg.limits {
		g, i := l.options()
		gopts, iopts = append(gopts, g), append(iopts, i)
	}
	gopts = append(gopts, cfg.socket...)
	s.grpc = grpc.NewServer(append(gopts, cfg.grpc...)...)
	s.notInproc = optionsNotInproc(cfg.grpc)
	s.notShm = s.notInproc
	if s.notShm == nil && cfg.creds.Info().SecurityProtocol != "insecure" {
		s.notShm = fmt.Errorf("the server's transport credentials (%s) would secure unix: and TCP, and the shm: framing carries none", cfg.creds.Info().SecurityProtocol)
	}
	s.channel = inproc.New(append(iopts, cfg.inproc...)...)

	if cfg.health {
		s.health = health.NewServer()
		healthgrpc.RegisterHealthServer(s, s.health)
	}
	if cfg.reflection {
		reflection.Register(s)
	}
	return s
}

// RegisterService registers a service on every transport, as generated
// RegisterXServer functions do.
// With [WithHealth], health checks report the service SERVING.
//
// It panics, on whatever transports the server has, if called:
//   - once [Server.Serve] or a stop has begun;
//   - with a service already registered.
//
// grpc.Server's ends the process for a registration after its Serve and
// for a duplicate: it logs them with Fatalf.
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	// Held throughout, so that Serve cannot start grpc-go in between: its
	// own check would end the process where this one panics.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != listening {
		panic(fmt.Sprintf("localgrpc: Server.RegisterService for %q after the server began to serve or stop", desc.ServiceName))
	}
	if _, dup := s.grpc.GetServiceInfo()[desc.ServiceName]; dup {
		panic(fmt.Sprintf("localgrpc: Server.RegisterService found duplicate service registration for %q", desc.ServiceName))
	}
	s.grpc.RegisterService(desc, impl)
	s.channel.RegisterService(desc, impl)
	if s.health != nil {
		s.health.SetServingStatus(desc.ServiceName, healthgrpc.HealthCheckResponse_SERVING)
	}
}

// GetServiceInfo lists the registered services, as grpc.Server does.
func (s *Server) GetServiceInfo() map[string]grpc.ServiceInfo {
	return s.grpc.GetServiceInfo()
}

// Addrs returns the addresses the server listens on, in the address grammar
// and in the order they were bound.
// TCP ports that were 0 are resolved.
// Each address parses back to itself with [ParseAddress].
// Each can be given to [NewClient] as soon as [Server.Listen] or
// [Server.AddListener] has returned.
// Addrs is empty before, and after the server stopped.
func (s *Server) Addrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	addrs := make([]string, 0, len(s.listeners))
	for _, l := range s.listeners {
		addrs = append(addrs, l.String())
	}
	return addrs
}
