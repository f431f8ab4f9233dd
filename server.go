package localgrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// Server serves the services registered on it on any number of addresses
// at once: inproc: addresses through one in-process channel, all others
// (unix and abstract sockets, TCP) through one grpc.Server. Interceptors
// and stats handlers apply on every transport.
type Server struct {
	cfg     serverConfig
	grpc    *grpc.Server
	channel *inproc.Channel
	health  *health.Server

	mu        sync.Mutex
	started   bool
	stopping  bool
	cut       bool // Stop was called: no drain may wait
	listeners []*listener
	names     []string      // inproc names claimed
	ready     chan struct{} // closed once every address listens
	done      chan struct{} // closed once stopped
	serving   sync.WaitGroup
}

var (
	_ grpc.ServiceRegistrar          = (*Server)(nil)
	_ reflection.ServiceInfoProvider = (*Server)(nil)
	_ reflection.GRPCServer          = (*Server)(nil)
)

// NewServer returns a Server with no services and no addresses.
func NewServer(opts ...ServerOption) *Server {
	cfg := newServerConfig(opts)
	s := &Server{cfg: cfg, ready: make(chan struct{}), done: make(chan struct{})}

	gopts := []grpc.ServerOption{grpc.Creds(&peerCreds{policy: cfg.peers, logger: cfg.logger})}
	unary, stream := cfg.unary, cfg.stream
	if cfg.peers != nil {
		unary = append([]grpc.UnaryServerInterceptor{peerUnaryCheck}, unary...)
		stream = append([]grpc.StreamServerInterceptor{peerStreamCheck}, stream...)
	}
	gopts = append(gopts, grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	iopts := []inproc.Option{inproc.WithUnaryInterceptor(cfg.unary...), inproc.WithStreamInterceptor(cfg.stream...)}
	for _, h := range cfg.stats {
		gopts = append(gopts, grpc.StatsHandler(h))
		iopts = append(iopts, inproc.WithServerStatsHandler(h))
	}
	s.grpc = grpc.NewServer(append(gopts, cfg.grpc...)...)
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
// RegisterXServer functions do. Like grpc.Server, it panics if called after
// Serve.
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	s.grpc.RegisterService(desc, impl)
	s.channel.RegisterService(desc, impl)
}

// GetServiceInfo lists the registered services, as grpc.Server does.
func (s *Server) GetServiceInfo() map[string]grpc.ServiceInfo {
	return s.grpc.GetServiceInfo()
}

// Serve listens on every address and serves until ctx ends or Stop or
// GracefulStop is called; when ctx ends the server stops as Stop does. If
// an address is malformed or cannot be listened on, Serve returns that
// error at once and nothing is left listening. A Server serves once.
func (s *Server) Serve(ctx context.Context, addrs ...string) error {
	if len(addrs) == 0 {
		return errors.New("localgrpc: Serve needs at least one address")
	}
	parsed, err := parseListenAddrs(addrs)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("localgrpc: Serve was already called on this Server")
	}
	s.started = true
	if s.stopping {
		s.mu.Unlock()
		return errors.New("localgrpc: the Server is stopped")
	}
	if err := s.listenAll(parsed); err != nil {
		s.mu.Unlock()
		return err
	}
	serveErr := make(chan error, len(s.listeners))
	for _, l := range s.listeners {
		s.serving.Go(func() {
			if err := s.grpc.Serve(l.net); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				serveErr <- fmt.Errorf("localgrpc: serving %s: %w", l, err)
			}
		})
	}
	close(s.ready)
	s.mu.Unlock()

	select {
	case <-ctx.Done():
		s.Stop()
	case <-s.done:
	case err = <-serveErr:
		s.Stop()
	}
	<-s.done
	s.serving.Wait()
	return err
}

// parseListenAddrs parses addrs, all of them, so that every bad one is
// named at once.
func parseListenAddrs(addrs []string) ([]Address, error) {
	var errs []error
	parsed := make([]Address, 0, len(addrs))
	seen := map[Address]bool{}
	for _, a := range addrs {
		p, err := ParseAddress(a)
		switch {
		case err != nil:
			errs = append(errs, err)
		case p.Kind == Target:
			errs = append(errs, addressError(a, "a grpc-go target names servers to dial, not an address to listen on"))
		case seen[p]:
			errs = append(errs, addressError(a, "given twice"))
		default:
			seen[p] = true
			parsed = append(parsed, p)
		}
	}
	return parsed, errors.Join(errs...)
}

// listenAll listens on every address, or on none: on an error it undoes
// what it did. s.mu is held.
func (s *Server) listenAll(addrs []Address) error {
	for _, a := range addrs {
		if a.Kind == Inproc {
			if err := claimInproc(a, s.channel); err != nil {
				s.closeListeners()
				return err
			}
			s.names = append(s.names, a.Name)
			continue
		}
		l, err := listen(a, s.cfg.socketMode)
		if err != nil {
			s.closeListeners()
			return err
		}
		s.listeners = append(s.listeners, l)
	}
	return nil
}

// closeListeners releases every address. s.mu is held.
func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.close()
	}
	for _, name := range s.names {
		releaseInproc(name, s.channel)
	}
	s.listeners, s.names = nil, nil
}

// Ready is closed once Serve listens on every address, so that Addrs
// reports them all.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addrs returns where the server listens, in the address grammar, with
// TCP ports that were 0 resolved: inproc: names first, then the others in
// the order given. It is empty until Ready is closed.
func (s *Server) Addrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var addrs []string
	for _, n := range s.names {
		addrs = append(addrs, Address{Kind: Inproc, Name: n}.String())
	}
	for _, l := range s.listeners {
		addrs = append(addrs, l.String())
	}
	return addrs
}

// Stop stops the server at once: listeners close, socket files are
// removed, calls in flight end with Unavailable or Canceled. It does not
// wait for handlers to return. It cuts short a GracefulStop in progress,
// as grpc.Server's Stop does: that GracefulStop returns once the handlers
// still running have returned, which those that honour their context do
// at once.
func (s *Server) Stop() { s.stop(false) }

// GracefulStop stops taking calls, waits for the calls in flight to end,
// then stops the server as Stop does. Stop, or the end of Serve's context,
// cuts the wait short.
func (s *Server) GracefulStop() { s.stop(true) }

func (s *Server) stop(graceful bool) {
	s.mu.Lock()
	first, cut := !s.stopping, !graceful && !s.cut
	s.stopping = true
	if !graceful {
		s.cut = true
	}
	if first {
		// inproc names go first, so that no new Dial finds a stopping server.
		for _, name := range s.names {
			releaseInproc(name, s.channel)
		}
	}
	s.mu.Unlock()
	switch {
	case first && s.health != nil:
		s.health.Shutdown()
	case !first && !cut:
		<-s.done
		return
	}
	if graceful {
		var wg sync.WaitGroup
		wg.Go(s.grpc.GracefulStop)
		wg.Go(s.channel.GracefulStop)
		wg.Wait()
	} else {
		s.grpc.Stop()
		s.channel.Stop()
	}
	s.finish()
}

// finish releases every address and marks the server stopped, once: the
// first of Stop and a GracefulStop it cut short to get there.
func (s *Server) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	s.closeListeners()
	close(s.done)
}
