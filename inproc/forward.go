package inproc

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// forwarder is a channel's catch-all: the client side of a transport
// that takes every call of the channel to a server in another process.
// Its handlers get their method from grpc.Method or
// grpc.MethodFromServerStream, and the call's messages as
// *inprocconn.Encoded on a binding that encodes.
type forwarder struct {
	service service // no description, no implementation
	unary   grpc.MethodHandler
	stream  grpc.StreamDesc
	open    inprocconn.OpenFunc
	// methods holds a method per name and kind, up to maxForwarded of
	// them: a call's method keeps the handover's slots and the stats'
	// name. Past the bound a call gets a method of its own.
	methods sync.Map // forwardKey → *method
	count   atomic.Int32
}

type forwardKey struct {
	name  string
	unary bool
}

const maxForwarded = 4096

func init() {
	inprocconn.Request = func(ctx context.Context) (metadata.MD, string) {
		ts, _ := grpc.ServerTransportStreamFromContext(ctx).(*transportStream)
		if ts == nil {
			return nil, ""
		}
		c := (*call)(ts)
		c.mu.Lock()
		md := c.md
		c.mu.Unlock()
		if c.info.report == nil {
			return md, ""
		}
		return md, c.info.report.subtype
	}
	inprocconn.Follows = func(ctx context.Context) context.Context {
		ts, _ := grpc.ServerTransportStreamFromContext(ctx).(*transportStream)
		if ts == nil {
			return nil
		}
		if u, ok := (*call)(ts).sctx.parent.(*unaryContext); ok {
			return u.follows
		}
		return nil
	}
	inprocconn.Forward = func(cc grpc.ClientConnInterface, unary grpc.MethodHandler, stream grpc.StreamHandler, open inprocconn.OpenFunc) {
		ch := cc.(*Channel)
		f := &forwarder{unary: unary, stream: grpc.StreamDesc{Handler: stream, ClientStreams: true, ServerStreams: true}, open: open}
		ch.forward = f
	}
	inprocconn.Opened = func(ctx context.Context) any {
		ts, _ := grpc.ServerTransportStreamFromContext(ctx).(*transportStream)
		if ts == nil {
			return nil
		}
		return (*call)(ts).opened
	}
}

// method is the method of a call to name: through Invoke (unary), or
// through NewStream.
func (f *forwarder) method(name string, unary bool) *method {
	key := forwardKey{name, unary}
	if m, ok := f.methods.Load(key); ok {
		return m.(*method)
	}
	m := &method{service: &f.service, name: name}
	if unary {
		m.unary = f.unary
	} else {
		m.stream = &f.stream
	}
	if f.count.Load() >= maxForwarded {
		return m
	}
	if got, loaded := f.methods.LoadOrStore(key, m); loaded {
		return got.(*method)
	}
	f.count.Add(1)
	return m
}

// opens reports whether a stream to m must be opened by the forwarder's
// open before it returns (see inprocconn.OpenFunc).
func (f *forwarder) opens(m *method) bool {
	return f != nil && f.open != nil && m.service == &f.service
}
