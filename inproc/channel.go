package inproc

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/inproc/internal/handover"
	"github.com/localgrpc/localgrpc/internal/chain"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Channel is an in-process gRPC channel.
// It is a grpc.ServiceRegistrar to register service implementations on.
// It is a grpc.ClientConnInterface whose calls reach them with no network
// and no serialization.
// It is safe for concurrent use.
// The zero value is not: use New.
type Channel struct {
	cfg      config
	own      client                   // the Channel's own client side: Invoke's and NewStream's
	exec     executor                 // where handlers run: cfg.execution's
	services atomic.Pointer[registry] // replaced whole on registration
	mu       sync.Mutex               // serializes registration and stopping

	// base is the parent of every Isolated handler's context; Stop cancels
	// it. quit wakes waiting clients when Stop is called.
	base       context.Context
	cancelBase context.CancelFunc
	quit       chan struct{}

	state   atomic.Int32 // serving, draining or stopped
	active  atomic.Int64 // calls whose handler has not returned
	drained chan struct{}

	// forward, when set, takes every call no registered method takes
	// (see forwarder). It is set before the channel takes calls.
	forward *forwarder

	unaryInt     grpc.UnaryServerInterceptor
	streamInt    grpc.StreamServerInterceptor
	clientUnary  grpc.UnaryClientInterceptor
	clientStream grpc.StreamClientInterceptor
}

const (
	serving int32 = iota
	draining
	stopped
)

var (
	_ grpc.ClientConnInterface = (*Channel)(nil)
	_ grpc.ServiceRegistrar    = (*Channel)(nil)
)

// New returns a Channel with no services.
func New(opts ...Option) *Channel {
	ch := &Channel{cfg: newConfig(opts), quit: make(chan struct{}), drained: make(chan struct{})}
	ch.exec = executorFor(ch.cfg.execution)
	ch.own = client{ch: ch, stats: ch.cfg.clientStats, copy: ch.cfg.copy, unaryExec: ch.exec}
	ch.own.invoker = ch.own.invoke
	ch.base, ch.cancelBase = context.WithCancel(context.Background())
	ch.services.Store(&registry{})
	ch.unaryInt = chain.UnaryServer(ch.cfg.unaryInterceptors)
	ch.streamInt = chain.StreamServer(ch.cfg.streamInterceptors)
	ch.clientUnary = chain.UnaryClient(ch.cfg.clientUnary)
	ch.clientStream = chain.StreamClient(ch.cfg.clientStream)
	return ch
}

// registry is the immutable set of registered services.
type registry struct {
	services map[string]*service
	methods  map[string]*method // by full method name, "/pkg.Service/Method"
}

type service struct {
	desc *grpc.ServiceDesc
	impl any
}

type method struct {
	service *service
	name    string // full method name
	unary   grpc.MethodHandler
	stream  *grpc.StreamDesc
	// What the handover keeps of the request and response types last
	// sent on the method (see handover.Slot).
	requests, responses handover.Slot
	// calledAs is the name the method's first unary call was made with:
	// most often a generated constant that every call passes again, which
	// a string compare finds equal at its first pointer compare.
	calledAs atomic.Pointer[string]
}

// RegisterService registers a service implementation, as generated
// RegisterXServer functions do.
// It panics, as grpc.Server does, if impl does not implement the service or
// the service is already registered.
func (ch *Channel) RegisterService(desc *grpc.ServiceDesc, impl any) {
	if impl != nil {
		ht := reflect.TypeOf(desc.HandlerType).Elem()
		if st := reflect.TypeOf(impl); !st.Implements(ht) {
			panic(fmt.Sprintf("inproc: RegisterService found the handler of type %v that does not satisfy %v", st, ht))
		}
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	old := ch.services.Load()
	if _, dup := old.services[desc.ServiceName]; dup {
		panic(fmt.Sprintf("inproc: RegisterService found duplicate service registration for %q", desc.ServiceName))
	}
	r := &registry{services: make(map[string]*service, len(old.services)+1), methods: make(map[string]*method, len(old.methods)+len(desc.Methods)+len(desc.Streams))}
	for k, v := range old.services {
		r.services[k] = v
	}
	for k, v := range old.methods {
		r.methods[k] = v
	}
	s := &service{desc: desc, impl: impl}
	r.services[desc.ServiceName] = s
	for i := range desc.Methods {
		name := "/" + desc.ServiceName + "/" + desc.Methods[i].MethodName
		r.methods[name] = &method{service: s, name: name, unary: desc.Methods[i].Handler}
	}
	for i := range desc.Streams {
		name := "/" + desc.ServiceName + "/" + desc.Streams[i].StreamName
		r.methods[name] = &method{service: s, name: name, stream: &desc.Streams[i]}
	}
	ch.services.Store(r)
}

// GetServiceInfo lists the registered services, as grpc.Server does.
// So grpc-go's reflection service can be registered on a Channel.
func (ch *Channel) GetServiceInfo() map[string]grpc.ServiceInfo {
	r := ch.services.Load()
	info := make(map[string]grpc.ServiceInfo, len(r.services))
	for name, s := range r.services {
		methods := make([]grpc.MethodInfo, 0, len(s.desc.Methods)+len(s.desc.Streams))
		for _, m := range s.desc.Methods {
			methods = append(methods, grpc.MethodInfo{Name: m.MethodName})
		}
		for _, m := range s.desc.Streams {
			methods = append(methods, grpc.MethodInfo{Name: m.StreamName, IsClientStream: m.ClientStreams, IsServerStream: m.ServerStreams})
		}
		info[name] = grpc.ServiceInfo{Methods: methods, Metadata: s.desc.Metadata}
	}
	return info
}

// lookup finds the method a call names, or returns the Unimplemented status
// a grpc.Server would.
func (ch *Channel) lookup(fullMethod string, unary bool) (*method, error) {
	r := ch.services.Load()
	if m, ok := r.methods[fullMethod]; ok {
		return m, nil
	}
	if ch.forward != nil {
		return ch.forward.method(fullMethod, unary), nil
	}
	service, name, ok := splitMethod(fullMethod)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "malformed method name: %q", fullMethod)
	}
	if _, ok := r.services[service]; ok {
		return nil, status.Errorf(codes.Unimplemented, "unknown method %v for service %v", name, service)
	}
	return nil, status.Errorf(codes.Unimplemented, "unknown service %v", service)
}

// splitMethod splits "/service/method" as grpc-go's server does; ok is
// false for a name it calls malformed.
func splitMethod(fullMethod string) (service, method string, ok bool) {
	sm, ok := strings.CutPrefix(fullMethod, "/")
	pos := strings.LastIndex(sm, "/")
	if !ok || pos < 0 {
		return "", "", false
	}
	return sm[:pos], sm[pos+1:], true
}

// begin counts a call in, unless the channel no longer takes calls.
func (ch *Channel) begin(cl *client) bool {
	ch.active.Add(1)
	if st := ch.state.Load(); st != serving && (st != draining || cl == nil || !cl.drains) {
		ch.end()
		return false
	}
	return true
}

// end counts a call out once its handler returned.
func (ch *Channel) end() {
	if ch.active.Add(-1) == 0 && ch.state.Load() != serving {
		ch.markDrained()
	}
}

func (ch *Channel) markDrained() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	select {
	case <-ch.drained:
	default:
		close(ch.drained)
	}
}

// Stop refuses new calls and ends the calls in flight.
// Their handlers' contexts are cancelled, and waiting clients get
// Unavailable.
// A handler's Send or SendHeader then fails with Unavailable, as after a
// grpc.Server's Stop.
// A handler's Recv then fails with Canceled.
// Stop does not wait for handlers to return.
// An Inline handler runs on its caller's goroutine, so that caller returns
// when the handler does.
func (ch *Channel) Stop() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.state.Load() == stopped {
		return
	}
	ch.state.Store(stopped)
	ch.cancelBase()
	close(ch.quit)
}

// drain refuses new calls, but those of bindings that drain on their
// own.
func (ch *Channel) drain() {
	ch.mu.Lock()
	if ch.state.Load() == serving {
		ch.state.Store(draining)
	}
	ch.mu.Unlock()
}

// GracefulStop refuses new calls and waits until every call in flight has
// finished, then stops the channel.
// As with grpc.Server, Stop is how a drain is cut short:
//   - The calls end at once.
//   - GracefulStop returns once their handlers returned.
//   - Handlers that honour their context return at once.
func (ch *Channel) GracefulStop() {
	ch.drain()
	if ch.active.Load() == 0 {
		ch.markDrained()
	}
	select {
	case <-ch.drained:
	case <-ch.quit:
		<-ch.drained // the handlers of the calls Stop ended
	}
	ch.Stop()
}
