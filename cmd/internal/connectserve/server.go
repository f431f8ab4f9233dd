package connectserve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"github.com/localgrpc/localgrpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// A Service is one connect-go service to serve.
type Service struct {
	// Name is the fully-qualified service name, e.g. "echo.v1.Echo", as
	// health checks and reflection list it.
	Name string
	// Path and Handler are what the generated NewXHandler returns.
	Path    string
	Handler http.Handler
}

// A Server serves connect-go services, with health checking and
// reflection, on any number of socket addresses at once. As
// localgrpc.Server does, it binds its addresses with Listen, then serves
// them with Serve until Shutdown or the end of Serve's context.
type Server struct {
	http   *http.Server
	health *health.Server
	mode   fs.FileMode

	mu        sync.Mutex
	phase     phase
	listeners []net.Listener
	addrs     []string
	done      chan struct{}  // closed once shut down or closed
	failed    chan error     // the first listener that could not be served
	serving   sync.WaitGroup // http.Server.Serve, one per listener
}

// phase is where a Server is in its life; it only moves forward.
type phase uint8

const (
	listening phase = iota // before Serve
	serving                // Serve was called
	closed                 // Shutdown began, or Serve's context ended
)

// New returns a Server of services. Reflection lists them, with the health
// and reflection services, and each of those reports SERVING to health
// checks until Shutdown, when all report NOT_SERVING.
// opts apply to the health and reflection handlers; give the services'
// own to their NewXHandler. Unix sockets are created with mode.
func New(services []Service, mode fs.FileMode, opts ...connect.HandlerOption) *Server {
	mux := http.NewServeMux()
	names := []string{healthService}
	hs := health.NewServer()
	for _, svc := range services {
		mux.Handle(svc.Path, svc.Handler)
		names = append(names, svc.Name)
	}
	mux.Handle("/"+healthService+"/", healthHandler(hs, opts...))
	// Reflection lists itself too, as grpc-go's does, so that a client
	// sees the same services on either stack; and every service it lists
	// reports SERVING, as on localgrpc.Server.
	names = append(names, "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")
	for _, name := range names {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	reflector := grpcreflect.NewStaticReflector(names...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector, opts...))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector, opts...))

	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	return &Server{
		http: &http.Server{
			Handler:           mux,
			Protocols:         &protocols,
			ReadHeaderTimeout: 10 * time.Second,
		},
		health: hs,
		mode:   mode,
		done:   make(chan struct{}),
		failed: make(chan error, 1),
	}
}

// Listen binds every address, or none: if any is malformed or cannot be
// bound, Listen returns every such error and leaves nothing bound. Once it
// has returned, clients can connect; their calls wait until Serve serves.
// What Listen binds while Serve serves is served at once.
func (s *Server) Listen(addrs ...string) error {
	if len(addrs) == 0 {
		return errors.New("connectserve: Listen needs at least one address")
	}
	listeners, err := listenAll(addrs, s.mode)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == closed {
		for _, l := range listeners {
			l.Close()
		}
		return fmt.Errorf("connectserve: Listen: %w", http.ErrServerClosed)
	}
	for i, l := range listeners {
		s.addrs = append(s.addrs, realAddr(addrs[i], l))
		s.listeners = append(s.listeners, l)
		if s.phase == serving {
			s.serve(l)
		}
	}
	return nil
}

// Serve serves what Listen bound until ctx ends, which closes every
// connection at once, or until Shutdown. It returns nil then, or the error
// of a listener that failed, having closed the server. A Server serves
// once; after Shutdown, Serve returns an error wrapping
// http.ErrServerClosed.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.phase == closed:
		s.mu.Unlock()
		return fmt.Errorf("connectserve: Serve: %w", http.ErrServerClosed)
	case s.phase == serving:
		s.mu.Unlock()
		return errors.New("connectserve: Serve was already called on this Server")
	case len(s.listeners) == 0:
		s.mu.Unlock()
		return errors.New("connectserve: Serve has nothing to serve: call Listen first")
	}
	s.phase = serving
	for _, l := range s.listeners {
		s.serve(l)
	}
	s.mu.Unlock()

	var err error
	select {
	case <-ctx.Done():
		s.Close()
	case <-s.done:
	case err = <-s.failed:
		s.Close()
	}
	s.serving.Wait()
	return err
}

// serve has the HTTP server serve l. s.mu is held.
func (s *Server) serve(l net.Listener) {
	s.serving.Go(func() {
		if err := s.http.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			select {
			case s.failed <- fmt.Errorf("connectserve: serving %s: %w", l.Addr(), err):
			default:
			}
		}
	})
}

// Shutdown stops listening and waits for the calls in flight to end, or
// for ctx to end, when it closes the connections left. Serve returns as
// Shutdown begins.
func (s *Server) Shutdown(ctx context.Context) error {
	s.close()
	s.health.Shutdown() // health checks and watchers see NOT_SERVING
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	return err
}

// Close closes every listener and connection at once, removing the
// socket files its listeners made.
func (s *Server) Close() {
	s.close()
	s.http.Close()
}

// close marks the server closed, once. Listeners Serve never served are
// closed here; the HTTP server closes the others (closing them twice
// would make its Shutdown fail).
func (s *Server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == closed {
		return
	}
	if s.phase == listening {
		for _, l := range s.listeners {
			l.Close()
		}
	}
	s.phase = closed
	close(s.done)
}

// Handler is what the server serves, its services, health checking and
// reflection, as an http.Handler, to be served other ways too: in-process
// through inprochttp, for one.
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Addrs are the addresses the server listens on, with TCP port 0 resolved,
// once Listen has returned.
func (s *Server) Addrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.addrs...)
}

// listenAll listens on every address, or on none and returns why.
func listenAll(addrs []string, mode fs.FileMode) ([]net.Listener, error) {
	var listeners []net.Listener
	var errs []error
	for _, a := range addrs {
		l, err := localgrpc.Listen(a, mode)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		listeners = append(listeners, l)
	}
	if len(errs) > 0 {
		for _, l := range listeners {
			l.Close()
		}
		return nil, errors.Join(errs...)
	}
	return listeners, nil
}

// realAddr is where l listens, in the address grammar's canonical form,
// which parses back to itself: addr's, but for TCP, where the port is
// resolved.
func realAddr(addr string, l net.Listener) string {
	a, err := localgrpc.ParseAddress(addr)
	if err != nil {
		return addr
	}
	if a.Kind == localgrpc.TCP {
		if real, err := localgrpc.ParseAddress(l.Addr().String()); err == nil {
			a = real
		}
	}
	return a.String()
}
