package localgrpc

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/localgrpc/localgrpc/internal/chain"
	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// ClientConn is what NewClient returns: a connection for generated clients,
// closed when done.
//
// Its Close acts as grpc.ClientConn's on every transport. It ends the
// calls in flight with Canceled ("grpc: the client connection is
// closing"). The handlers of those calls find their contexts cancelled. A
// handler's Send or SendHeader then fails with Unavailable, as over a
// connection that closed. A call in flight whose Inline handler (see
// inproc.Inline) runs on the call's goroutine returns when that handler
// does. A call made after Close passes through the client's interceptors
// and fails with Canceled. Only the first Close returns nil; any later
// one returns an error with code Canceled.
type ClientConn interface {
	grpc.ClientConnInterface
	io.Closer
}

// A ClientOption configures NewClient.
type ClientOption func(*clientConfig)

type clientConfig struct {
	creds  credentials.TransportCredentials
	grpc   []grpc.DialOption
	unary  []grpc.UnaryClientInterceptor
	stream []grpc.StreamClientInterceptor
	stats  []stats.Handler
	calls  []grpc.CallOption
}

// WithClientTransportCredentials sets the transport credentials of every
// socket connection, as the server's [WithTransportCredentials] does for
// its listeners: credentials.NewTLS for a remote server, or
// insecure.NewCredentials() to send plaintext to another machine on
// purpose. In-process calls never leave the process and need none.
// WithClientTransportCredentials(nil) panics: a client meant to be
// secured must not fall back to plaintext because a variable was unset.
func WithClientTransportCredentials(creds credentials.TransportCredentials) ClientOption {
	if creds == nil {
		panic("localgrpc: WithClientTransportCredentials(nil); pass credentials, or insecure.NewCredentials() for plaintext on purpose")
	}
	return func(c *clientConfig) { c.creds = creds }
}

// WithGRPCDialOptions passes options to grpc-go for every address but
// inproc:. Transport credentials given here (grpc.WithTransportCredentials)
// win over [WithClientTransportCredentials], as a later option does. A
// dialer given here (grpc.WithContextDialer) replaces NewClient's, under
// the rules of [NewClient]; resolvers given here (grpc.WithResolvers)
// are never asked for an address on this machine. In-process calls never see these options: give
// interceptors, stats handlers and default call options (message size
// limits, say) with [WithClientUnaryInterceptor],
// [WithClientStreamInterceptor], [WithClientStatsHandler] and
// [WithDefaultCallOptions], which apply to every transport.
func WithGRPCDialOptions(opts ...grpc.DialOption) ClientOption {
	return func(c *clientConfig) { c.grpc = append(c.grpc, opts...) }
}

// WithClientUnaryInterceptor adds unary client interceptors, on every
// transport; the first is outermost. Interceptors run with a nil
// *grpc.ClientConn for inproc: addresses.
func WithClientUnaryInterceptor(ints ...grpc.UnaryClientInterceptor) ClientOption {
	return func(c *clientConfig) { c.unary = append(c.unary, ints...) }
}

// WithClientStreamInterceptor adds stream client interceptors, on every
// transport; the first is outermost.
func WithClientStreamInterceptor(ints ...grpc.StreamClientInterceptor) ClientOption {
	return func(c *clientConfig) { c.stream = append(c.stream, ints...) }
}

// WithClientStatsHandler adds a client stats handler, such as
// OpenTelemetry's otelgrpc.NewClientHandler, on every transport: in-process
// calls report to it as calls over a socket do, so one option gives the
// same client spans, and propagates the same trace context, whatever the
// address. As over a socket, a call that waits for a server, or finds
// none, reports TagRPC, Begin and End too. A call made after Close, or
// with a context that has ended, reports nothing: grpc-go fails it
// before it begins.
func WithClientStatsHandler(h stats.Handler) ClientOption {
	return func(c *clientConfig) { c.stats = append(c.stats, h) }
}

// WithDefaultCallOptions sets call options every call of the connection
// starts with, on every transport, as grpc.WithDefaultCallOptions does for
// grpc-go: grpc.MaxCallRecvMsgSize, say. A call's own options come after
// them and win.
func WithDefaultCallOptions(opts ...grpc.CallOption) ClientOption {
	return func(c *clientConfig) { c.calls = append(c.calls, opts...) }
}

// NewClient returns a connection to the server at addr, an address of the
// grammar of [ParseAddress]: an inproc: name a [Server] of this process
// serves, a unix or abstract socket, HOST:PORT, or any grpc-go target.
// As with grpc.NewClient, connections are made when first needed, on
// every transport: a call to an address nothing serves fails with
// Unavailable, or with grpc.WaitForReady(true) waits for a server until
// its context ends or the connection is closed; a call to a Server that
// listens but does not serve yet waits for it likewise.
//
// Plaintext is the default only where nothing leaves the machine, judged
// by what addr says, not by what a name resolves to: inproc:, unix and
// abstract sockets, loopback and unspecified IP addresses, localhost and
// :PORT, and dns or passthrough targets of those hosts. "localhost." is
// not among them: with its trailing dot it is a DNS name, which a DNS
// server may resolve to any address. Any other address needs transport
// credentials, [WithClientTransportCredentials]
// (insecure.NewCredentials() for plaintext on purpose), or NewClient
// returns an error, as grpc.NewClient does without them.
//
// What addr says is where the call goes:
//   - localhost, in any case, and an empty host are dialed on loopback
//     (127.0.0.1, then ::1) and never resolved, as RFC 6761 says
//     localhost names loopback: a hosts file without it, or a DNS search
//     domain, would let DNS choose where the call goes. The same holds
//     for dns and passthrough targets of localhost or of no host
//     (dns:///:PORT, passthrough:///:PORT), whatever DNS server a dns
//     target names.
//   - An address on this machine is dialed without a proxy: Go's proxy
//     rules pass over localhost and loopback addresses only, and an
//     HTTPS_PROXY would carry a call to 0.0.0.0 to another machine.
//   - An address on this machine goes through no resolver but one of
//     its connection's own, which answers with the address as written.
//     A resolver registered for dns or passthrough (resolver.Register is
//     global, and any package a program imports may call it) or given
//     with grpc.WithResolvers is never asked. Its dialer refuses any
//     other address.
//
// A dialer of your own, grpc.WithContextDialer given through
// [WithGRPCDialOptions], replaces NewClient's:
//   - For an address on this machine, it is called with the address as
//     written: HOST:PORT, "localhost:PORT" for localhost and :PORT, and
//     "localhost" for unix and abstract sockets.
//   - Where plaintext is the default, the connection it returns must be
//     to this machine: a unix socket, or TCP whose peer is a loopback
//     address. Any other is closed before a byte is sent, and calls fail
//     with Unavailable, naming addr. Give transport credentials to dial
//     elsewhere (insecure.NewCredentials() for plaintext on purpose).
func NewClient(addr string, opts ...ClientOption) (ClientConn, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	var cfg clientConfig
	for _, o := range opts {
		o(&cfg)
	}
	if a.Kind == Inproc {
		// As a socket client, it connects when a call needs a server: one
		// may listen on the name later.
		c := &inprocConn{
			name:     a.Name,
			unary:    chain.UnaryClient(cfg.unary),
			stream:   chain.StreamClient(cfg.stream),
			stats:    cfg.stats,
			defaults: slices.Clip(cfg.calls),
		}
		c.invoker, c.streamer = c.invoke, c.newStream
		c.closed, c.close = context.WithCancelCause(context.Background())
		if srv, _ := lookupOrWait(a.Name); srv != nil {
			c.bound.Store(c.bind(srv))
		}
		return c, nil
	}
	var gopts []grpc.DialOption
	local := onThisMachine(a)
	switch {
	case cfg.creds != nil:
		gopts = append(gopts, grpc.WithTransportCredentials(cfg.creds))
	case local:
		// Nothing leaves the machine: plaintext, as is usual for unix
		// sockets and loopback, unless WithGRPCDialOptions says otherwise;
		// and only on a connection to this machine, whatever dialer made
		// it.
		gopts = append(gopts, grpc.WithTransportCredentials(newLocalPlaintext(addr)))
	}
	target := a.Target
	switch {
	case local:
		t, dial, err := localTarget(addr, a)
		if err != nil {
			return nil, err
		}
		target = t
		gopts = append(gopts, dial...)
		// Go's proxy rules pass over only "localhost" and loopback IP
		// addresses: an HTTPS_PROXY would carry a call to 0.0.0.0, ::
		// or LOCALHOST, in plaintext, to another machine. grpc-go's own
		// dialer is the one that asks them, should the user's options
		// put it back (grpc.WithContextDialer(nil)).
		gopts = append(gopts, grpc.WithNoProxy())
	case a.Kind == TCP:
		// grpc-go percent-decodes the target: a "%" of the address (an
		// IPv6 zone) must reach its dialer as written, not decode into
		// another host ("127.0.0.1%2eevil.example").
		target = "passthrough:///" + strings.ReplaceAll(a.HostPort, "%", "%25")
	}
	gopts = append(gopts,
		grpc.WithChainUnaryInterceptor(cfg.unary...),
		grpc.WithChainStreamInterceptor(cfg.stream...),
	)
	for _, h := range cfg.stats {
		gopts = append(gopts, grpc.WithStatsHandler(h))
	}
	if cfg.calls != nil {
		gopts = append(gopts, grpc.WithDefaultCallOptions(cfg.calls...))
	}
	cc, err := grpc.NewClient(target, append(gopts, cfg.grpc...)...)
	if err != nil && cfg.creds == nil && !local && strings.Contains(err.Error(), "no transport security set") {
		// grpc-go's own refusal, with the rule and the ways out.
		return nil, &AddressError{Address: addr, Err: err, Reason: "may reach another machine, and no transport credentials were given: " +
			"give them with WithClientTransportCredentials (credentials.NewTLS, or insecure.NewCredentials() for plaintext on purpose) " +
			"or WithGRPCDialOptions(grpc.WithTransportCredentials(...)); plaintext is the default only for inproc:, unix and abstract sockets, loopback addresses and localhost (without a trailing dot, which makes it a DNS name)"}
	}
	if err != nil {
		// Named by addr: grpc-go's errors name the target it was given,
		// which is not always addr.
		return nil, fmt.Errorf("localgrpc: NewClient(%q): %w", addr, err) // not a ClientConn holding a nil *grpc.ClientConn
	}
	return cc, nil
}

// inprocConn is a client's connection to a Server's in-process channel;
// closing it does not stop the server. Like a grpc-go client, which dials
// again, it follows its name to the next Server that serves it once its
// own has stopped.
//
// Its calls go to the client side of the channel bound to it (see
// bind), as a grpc.ClientConn's go to its transport: its stats handlers
// and its close reach them as the channel's own settings, and no call
// option carries them, which its interceptors would see and could drop.
type inprocConn struct {
	name string
	// bound is the Server the name last led to, with its channel bound
	// to the connection; nil until the name led to one.
	bound  atomic.Pointer[boundServer]
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

// boundServer is a Server and the client side of its channel bound to
// a connection: the connection's stats handlers hear the channel's calls
// and its close ends them (see package internal/inprocconn).
type boundServer struct {
	srv *Server
	cc  grpc.ClientConnInterface
}

// bind binds the channel of srv to the connection.
func (c *inprocConn) bind(srv *Server) *boundServer {
	return &boundServer{srv: srv, cc: inprocconn.Bind(srv.channel, inprocconn.Conn{Stats: c.stats, Closed: c.closed})}
}

// takesCalls reports whether b's server takes calls (see
// Server.takesCalls); a nil b has none.
func (b *boundServer) takesCalls() bool { return b != nil && b.srv.takesCalls() }

// server is the Server the connection's name leads to: its last one
// while it takes calls, else the one serving the name now (a successor of
// a draining server, as a socket client reconnects on GOAWAY). With none,
// a call fails with Unavailable at once, as over a socket with nothing
// listening, or, if it waits for ready (grpc.WaitForReady), waits for one
// until ctx ends or the connection closes.
func (c *inprocConn) server(ctx context.Context, wait bool) (*boundServer, error) {
	for {
		cur := c.bound.Load()
		if cur != nil && !cur.srv.stopping.Load() {
			return cur, nil
		}
		next, claimed := lookupOrWait(c.name)
		if next != nil && (cur == nil || next != cur.srv) && !next.stopping.Load() {
			if b := c.bind(next); c.bound.CompareAndSwap(cur, b) {
				return b, nil
			}
			continue // another call moved on first: look again
		}
		if !wait {
			// A stopping server takes no more calls: as over a socket,
			// nothing serves the name.
			return nil, status.Errorf(codes.Unavailable, "localgrpc: no server of this process serves inproc:%s", c.name)
		}
		select {
		case <-claimed:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-c.closed.Done():
			return nil, errConnClosing
		}
	}
}

// ready is the server a call goes to once it serves: a call that waits
// for ready (wait) passes over a server that stopped before it served, as
// a socket client passes over a listener that closed, to its successor.
func (c *inprocConn) ready(ctx context.Context, wait bool) (*boundServer, error) {
	for {
		b, err := c.server(ctx, wait)
		if err != nil {
			return nil, err
		}
		err = b.srv.awaitServe(ctx, c.closed.Done())
		if err == errNeverServed && wait {
			continue
		}
		if err == nil && c.closed.Err() != nil {
			return nil, errConnClosing // Close came while it waited
		}
		return b, err
	}
}

// onFinish calls the grpc.OnFinish options of opts with err.
func onFinish(opts []grpc.CallOption, err error) {
	for _, o := range opts {
		if o, ok := o.(grpc.OnFinishCallOption); ok {
			o.OnFinish(err)
		}
	}
}

// waitsForReady reports whether opts ask a call to wait for a server
// rather than fail fast; the last one given says.
func waitsForReady(opts []grpc.CallOption) bool {
	wait := false
	for _, o := range opts {
		if f, ok := o.(grpc.FailFastCallOption); ok {
			wait = !f.FailFast
		}
	}
	return wait
}

// callOptions are the connection's default call options, then opts, as
// grpc-go combines them: what its interceptors and its calls see.
func (c *inprocConn) callOptions(opts []grpc.CallOption) []grpc.CallOption {
	switch {
	case len(c.defaults) == 0:
		return opts
	case len(opts) == 0:
		return c.defaults // clipped: an append copies it
	}
	return append(c.defaults, opts...)
}

var errConnClosing = status.Error(codes.Canceled, "grpc: the client connection is closing")

func (c *inprocConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	opts = c.callOptions(opts)
	if c.unary == nil {
		return c.invoke(ctx, method, req, reply, nil, opts...)
	}
	return c.unary(ctx, method, req, reply, nil, c.invoker, opts...)
}

func (c *inprocConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
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
func (c *inprocConn) invoke(ctx context.Context, method string, req, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	b := c.bound.Load()
	if b.takesCalls() && c.closed.Err() == nil {
		return b.cc.Invoke(ctx, method, req, reply, opts...)
	}
	cc, ctx, ws, err := c.await(ctx, method, nil, opts)
	if err != nil {
		return err
	}
	err = cc.Invoke(ctx, method, req, reply, opts...)
	ws.failed(ctx, err)
	return err
}

func (c *inprocConn) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	b := c.bound.Load()
	if b.takesCalls() && c.closed.Err() == nil {
		return b.cc.NewStream(ctx, desc, method, opts...)
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
func (c *inprocConn) await(ctx context.Context, method string, desc *grpc.StreamDesc, opts []grpc.CallOption) (_ grpc.ClientConnInterface, _ context.Context, _ *waitStats, err error) {
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
	b, err := c.ready(ctx, wait)
	if err != nil {
		if ws != nil {
			ws.end(ctx, err)
		}
		return nil, ctx, nil, err
	}
	if ws == nil {
		return b.cc, ctx, nil, nil
	}
	// The channel must not tag and begin the call again: its client
	// side for this call has the handlers as begun.
	cc := inprocconn.Bind(b.srv.channel, inprocconn.Conn{Stats: ws.taken(ctx), Closed: c.closed})
	return cc, ctx, ws, nil
}

// Close ends the calls in flight with Canceled, as a closed
// grpc.ClientConn does, through the client side of its server's channel
// bound to it (see bind). A call it ends returns at once, unless its handler runs on the call's
// goroutine, as an Inline handler does (see inproc.Inline): that call
// returns when its handler does. Later calls fail in await. Only the
// first Close returns nil; any other returns errConnClosing.
func (c *inprocConn) Close() error {
	if !c.closeCalled.CompareAndSwap(false, true) {
		return errConnClosing
	}
	c.close(errConnClosing)
	return nil
}
