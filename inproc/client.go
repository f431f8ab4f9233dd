package inproc

import (
	"context"
	"net"
	"slices"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
)

// client is a client side of a Channel: the Channel's own, or one bound
// to a connection of localgrpc's NewClient (see bind). Its calls report
// to its stats handlers, and a connection's close ends them. A
// connection's settings reach its calls so, as a grpc.ClientConn's own
// do, and not as call options, which a client interceptor would see and
// could drop.
type client struct {
	ch    *Channel
	stats statsHandlers // the channel's client stats handlers, then the connection's
	// closed ends when the connection closes. It is nil for the
	// Channel's own client side, which has no connection to close.
	closed context.Context
	// copy is how its calls' messages cross unless a call says: the
	// channel's mode, or encode for a transport's binding, which no call
	// option changes.
	copy CopyMode
	// unaryExec runs its unary calls' handlers: the channel's executor,
	// or Inline's for a transport that gives each call a goroutine of its
	// own. Streams run on the channel's.
	unaryExec executor
	// peer is the other end of its calls, nil for the channel's own
	// in-process one.
	peer *peer.Peer
	// drains: its calls are taken while the channel drains (see
	// inprocconn.Conn.Drains).
	drains bool
	// invoker is invoke, made once: the client interceptors take it on
	// every call, and a method value made there would be made each time.
	invoker grpc.UnaryInvoker
	// lastUnary is the registered method its last unary call found.
	lastUnary atomic.Pointer[method]
}

// lookupUnary is Channel.lookup for a unary call. A client most often
// calls one method again and again, with the same name, which the method
// keeps as it was first called (see method.calledAs); a registered
// method's entry never changes, as nothing is unregistered.
func (cl *client) lookupUnary(fullMethod string) (*method, error) {
	if m := cl.lastUnary.Load(); m != nil {
		if name := m.calledAs.Load(); name != nil && *name == fullMethod {
			return m, nil
		}
	}
	// Only a registered method is kept: a forwarded one gives way to a
	// service registered later.
	m, ok := cl.ch.services.Load().methods[fullMethod]
	if !ok {
		return cl.ch.lookup(fullMethod, true)
	}
	if m.calledAs.Load() == nil {
		name := fullMethod
		m.calledAs.CompareAndSwap(nil, &name)
	}
	cl.lastUnary.Store(m)
	return m, nil
}

func init() {
	inprocconn.Bind = func(ch grpc.ClientConnInterface, c inprocconn.Conn) grpc.ClientConnInterface {
		return ch.(*Channel).bind(c)
	}
	inprocconn.Drain = func(ch grpc.ClientConnInterface) { ch.(*Channel).drain() }
	inprocconn.Refuses = func(ctx context.Context, opts []grpc.CallOption) error {
		if _, err := newCallInfo(nil, Clone, opts); err != nil {
			return err
		}
		_, err := requestMD(ctx)
		return err
	}
}

// bind returns the client side of ch bound to the connection c.
func (ch *Channel) bind(c inprocconn.Conn) *client {
	hs := statsHandlers(ch.cfg.clientStats)
	if len(c.Stats) > 0 {
		hs = append(slices.Clip(hs), c.Stats...)
	}
	cl := &client{ch: ch, stats: hs, closed: c.Closed, copy: ch.cfg.copy, unaryExec: ch.exec, peer: c.Peer, drains: c.Drains}
	cl.invoker = cl.invoke
	if c.Encode {
		cl.copy = encode
	}
	if c.InlineUnary {
		cl.unaryExec = executorFor(Inline)
	}
	return cl
}

// peerOf returns a new copy of the other end of cl's calls, as
// grpc-go's peer.FromContext and grpc.Peer give one per call.
func (cl *client) peerOf() *peer.Peer {
	if cl == nil || cl.peer == nil {
		return newPeer()
	}
	p := *cl.peer
	return &p
}

// addrs are the remote and local addresses of cl's calls, for stats.
func (cl *client) addrs() (remote, local net.Addr) {
	if cl == nil || cl.peer == nil {
		return Addr{}, Addr{}
	}
	return cl.peer.Addr, cl.peer.LocalAddr
}

// Invoke performs a unary call, as Channel.Invoke does: through the
// Channel's default call options and client interceptors.
func (cl *client) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	ch := cl.ch
	opts = ch.withDefaults(opts)
	if ch.clientUnary != nil {
		return ch.clientUnary(ctx, method, req, reply, nil, cl.invoker, opts...)
	}
	return cl.invoke(ctx, method, req, reply, nil, opts...)
}

// NewStream begins a streaming call, as Channel.NewStream does: through
// the Channel's default call options and client interceptors.
func (cl *client) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	ch := cl.ch
	opts = ch.withDefaults(opts)
	if ch.clientStream != nil {
		return ch.clientStream(ctx, desc, nil, method, cl.newStream, opts...)
	}
	return cl.newStream(ctx, desc, nil, method, opts...)
}
