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
// reflection, on any number of socket addresses at once.
type Server struct {
	http    *http.Server
	health  *health.Server
	mode    fs.FileMode
	ready   chan struct{}
	mu      sync.Mutex
	addrs   []string
	serving sync.WaitGroup
}

// New returns a Server of services. Every service, and the health service
// itself, reports SERVING to health checks; reflection lists them all.
// opts apply to the health and reflection handlers; give the services'
// own to their NewXHandler. Unix sockets are created with mode.
func New(services []Service, mode fs.FileMode, opts ...connect.HandlerOption) *Server {
	mux := http.NewServeMux()
	names := []string{healthService}
	hs := health.NewServer()
	for _, svc := range services {
		mux.Handle(svc.Path, svc.Handler)
		names = append(names, svc.Name)
		hs.SetServingStatus(svc.Name, healthpb.HealthCheckResponse_SERVING)
	}
	mux.Handle("/"+healthService+"/", healthHandler(hs, opts...))
	// Reflection lists itself too, as grpc-go's does, so that a client
	// sees the same services on either stack.
	names = append(names, "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")
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
		ready:  make(chan struct{}),
	}
}

// Serve listens on every address and serves until ctx ends, which closes
// every connection at once, or until Shutdown. If an address is malformed
// or cannot be listened on, Serve returns every such error at once and
// nothing is left listening. A Server serves once.
func (s *Server) Serve(ctx context.Context, addrs ...string) error {
	if len(addrs) == 0 {
		return errors.New("connectserve: Serve needs at least one address")
	}
	listeners, err := listenAll(addrs, s.mode)
	if err != nil {
		return err
	}
	s.mu.Lock()
	for i, l := range listeners {
		s.addrs = append(s.addrs, realAddr(addrs[i], l))
	}
	s.mu.Unlock()

	errs := make(chan error, len(listeners))
	for _, l := range listeners {
		s.serving.Go(func() {
			if err := s.http.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("connectserve: serving %s: %w", l.Addr(), err)
			}
		})
	}
	close(s.ready)
	stop := context.AfterFunc(ctx, func() { s.http.Close() })
	defer stop()
	s.serving.Wait()
	close(errs)
	return errors.Join(collect(errs)...)
}

// Shutdown stops listening and waits for the calls in flight to end, or
// for ctx to end, when it closes the connections left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.health.Shutdown() // health checks and watchers see NOT_SERVING
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	return err
}

// Ready is closed once the server listens on every address.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addrs are the addresses the server listens on, with TCP port 0 resolved,
// once Ready is closed.
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

// realAddr is where l listens, in the address grammar: addr itself, but
// for TCP, where the port is resolved.
func realAddr(addr string, l net.Listener) string {
	if a, err := localgrpc.ParseAddress(addr); err == nil && a.Kind == localgrpc.TCP {
		return l.Addr().String()
	}
	return addr
}

func collect(errs <-chan error) []error {
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return all
}
