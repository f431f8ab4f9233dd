package localgrpc

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/internal/chain"
	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// callConn is a connection of NewClient whose calls go to an inproc
// channel's client side bound to it: an inproc: server's channel, or the
// forwarding channel of a shm: connection. Its stats handlers and its
// close reach the calls as the channel's own settings, as a
// grpc.ClientConn's reach its transport, and no call option carries
// them, which its interceptors would see and could drop. Its router says
// where the calls go.
type callConn struct {
	route  router
	unary  grpc.UnaryClientInterceptor
	stream grpc.StreamClientInterceptor
	// invoker and streamer are invoke and newStream, made once: where the
	// interceptor chains end.
	invoker  grpc.UnaryInvoker
	streamer grpc.Streamer
	stats    []stats.Handler // the client stats handlers
	// defaults start every call, before the caller's options.
	defaults []grpc.CallOption
	// closed ends at Close, with errConnClosing as its cause. closeCalled
	// is set by the first Close, the one that returns nil.
	closed      context.Context
	close       context.CancelCauseFunc
	closeCalled atomic.Bool
}

// router finds the server of a callConn's calls.
type router interface {
	// now is the client side a call goes straight to, bound to the
	// connection (see bind); nil when the call must wait for one in
	// await.
	now() grpc.ClientConnInterface
	// ready waits for a server to take a call, as a socket client waits
	// to connect: until one serves or, unless wait (grpc.WaitForReady),
	// fails at once with Unavailable when none does; or until ctx ends or
	// the connection closes.
	ready(ctx context.Context, wait bool) (destination, error)
}

// destination is where a call that waited goes.
type destination interface {
	// rebind is the client side bound to the connection with hs as its
	// stats handlers: a call that waited began for them already.
	rebind(hs []stats.Handler) grpc.ClientConnInterface
}

func newCallConn(cfg clientConfig, route router) *callConn {
	c := &callConn{
		route:    route,
		unary:    chain.UnaryClient(cfg.unary),
		stream:   chain.StreamClient(cfg.stream),
		stats:    cfg.stats,
		defaults: slices.Clip(cfg.calls),
	}
	c.invoker, c.streamer = c.invoke, c.newStream
	c.closed, c.close = context.WithCancelCause(context.Background())
	return c
}

var errConnClosing = status.Error(codes.Canceled, "grpc: the client connection is closing")

// callOptions are the connection's default call options, then opts, as
// grpc-go combines them: what its interceptors and its calls see.
func (c *callConn) callOptions(opts []grpc.CallOption) []grpc.CallOption {
	switch {
	case len(c.defaults) == 0:
		return opts
	case len(opts) == 0:
		return c.defaults // clipped: an append copies it
	}
	return append(c.defaults, opts...)
}

func (c *callConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	opts = c.callOptions(opts)
	if c.unary == nil {
		return c.invoke(ctx, method, req, reply, nil, opts...)
	}
	return c.unary(ctx, method, req, reply, nil, c.invoker, opts...)
}

func (c *callConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	opts = c.callOptions(opts)
	if c.stream == nil {
		return c.newStream(ctx, desc, nil, method, opts...)
	}
	return c.stream(ctx, desc, nil, method, c.streamer, opts...)
}

// invoke and newStream are the calls past the client's interceptors. A
// call goes straight to the channel of the server it last reached while
// that one serves. Any other goes through await: as over a socket, it
// waits for a server to serve, and a closed connection fails it there,
// below the interceptors, which see its error as they do over grpc-go.
func (c *callConn) invoke(ctx context.Context, method string, req, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	if cc := c.route.now(); cc != nil && c.closed.Err() == nil {
		return cc.Invoke(ctx, method, req, reply, opts...)
	}
	cc, ctx, ws, err := c.await(ctx, method, nil, opts)
	if err != nil {
		return err
	}
	err = cc.Invoke(ctx, method, req, reply, opts...)
	ws.failed(ctx, err)
	return err
}

func (c *callConn) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if cc := c.route.now(); cc != nil && c.closed.Err() == nil {
		return cc.NewStream(ctx, desc, method, opts...)
	}
	cc, ctx, ws, err := c.await(ctx, method, desc, opts)
	if err != nil {
		return nil, err
	}
	s, err := cc.NewStream(ctx, desc, method, opts...)
	ws.failed(ctx, err)
	return s, err
}

// await finds a server for a call of method that cannot go straight to
// one: none serves the connection's name, its server has not begun to
// serve or is stopping, or the connection closed. desc is nil for a unary
// call. It returns the client side of the server's channel that the call
// goes to, the context it goes with, and its waitStats (nil: the
// connection has no stats handlers).
//
// As grpc-go's client, it fails a call whose options or outgoing metadata
// a channel would refuse, whose context has ended, or whose connection
// has closed, before the call begins: its stats handlers hear nothing of
// it. Any other call begins here, before it waits, as
// grpc-go's begins before it picks a connection: see beginWait. A call
// that fails here ends for its grpc.OnFinish options, as grpc-go's client
// ends every call it fails before a server has it: no channel will.
func (c *callConn) await(ctx context.Context, method string, desc *grpc.StreamDesc, opts []grpc.CallOption) (_ grpc.ClientConnInterface, _ context.Context, _ *waitStats, err error) {
	defer func() {
		if err != nil {
			onFinish(opts, err)
		}
	}()
	if err := inprocconn.Refuses(ctx, opts); err != nil {
		return nil, ctx, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ctx, nil, status.FromContextError(err).Err()
	}
	if c.closed.Err() != nil {
		return nil, ctx, nil, errConnClosing
	}
	wait := waitsForReady(opts)
	ctx, ws := beginWait(ctx, method, desc, !wait, c.stats)
	d, err := c.route.ready(ctx, wait)
	if err == nil && c.closed.Err() != nil {
		err = errConnClosing // Close came while it waited
	}
	if err != nil {
		if ws != nil {
			ws.end(ctx, err)
		}
		return nil, ctx, nil, err
	}
	if ws == nil {
		return d.rebind(c.stats), ctx, nil, nil
	}
	// The channel must not tag and begin the call again: its client
	// side for this call has the handlers as begun.
	return d.rebind(ws.taken(ctx)), ctx, ws, nil
}

// Close ends the calls in flight with Canceled, as a closed
// grpc.ClientConn does, through the client side of its server's channel
// bound to it (see bind). A call it ends returns at once, unless its handler runs on the call's
// goroutine, as an Inline handler does (see inproc.Inline): that call
// returns when its handler does. Later calls fail in await. Only the
// first Close returns nil; any other returns errConnClosing.
func (c *callConn) Close() error {
	if !c.closeCalled.CompareAndSwap(false, true) {
		return errConnClosing
	}
	c.close(errConnClosing)
	return nil
}
