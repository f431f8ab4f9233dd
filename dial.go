package localgrpc

import (
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/stats"
)

// ClientConn is what NewClient returns: a connection for generated clients,
// closed when done.
//
// Its Close acts as grpc.ClientConn's on every transport:
//   - It ends the calls in flight with Canceled ("grpc: the client
//     connection is closing").
//   - The handlers of those calls find their contexts cancelled.
//     A handler's Send or SendHeader then fails with Unavailable, as over a
//     connection that closed.
//   - A call in flight whose Inline handler (see inproc.Inline) runs on the
//     call's goroutine returns when that handler does.
//   - A call made after Close passes through the client's interceptors and
//     fails with Canceled.
//   - Only the first Close returns nil.
//     Any later one returns an error with code Canceled.
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
	// shmSpin is WithClientShmSpin's.
	shmSpin int
}

// WithClientTransportCredentials sets the transport credentials of every
// socket connection.
// It does for the client what the server's [WithTransportCredentials] does
// for its listeners.
// Give credentials.NewTLS for a remote server.
// Give insecure.NewCredentials() to send plaintext to another machine on
// purpose.
// In-process calls never leave the process and need none.
// WithClientTransportCredentials(nil) panics.
// A client meant to be secured must not fall back to plaintext because a
// variable was unset.
func WithClientTransportCredentials(creds credentials.TransportCredentials) ClientOption {
	if creds == nil {
		panic("localgrpc: WithClientTransportCredentials(nil); pass credentials, or insecure.NewCredentials() for plaintext on purpose")
	}
	return func(c *clientConfig) { c.creds = creds }
}

// WithGRPCDialOptions passes options to grpc-go for every address but
// inproc:.
//   - Transport credentials given here (grpc.WithTransportCredentials) win
//     over [WithClientTransportCredentials], as a later option does.
//   - A dialer given here (grpc.WithContextDialer) replaces NewClient's,
//     under the rules of [NewClient].
//   - Resolvers given here (grpc.WithResolvers) are never asked for an
//     address on this machine.
//
// In-process calls never see these options.
// Give interceptors, stats handlers and default call options (message size
// limits, say) with these instead, which apply to every transport:
//   - [WithClientUnaryInterceptor];
//   - [WithClientStreamInterceptor];
//   - [WithClientStatsHandler];
//   - [WithDefaultCallOptions].
func WithGRPCDialOptions(opts ...grpc.DialOption) ClientOption {
	return func(c *clientConfig) { c.grpc = append(c.grpc, opts...) }
}

// WithClientUnaryInterceptor adds unary client interceptors, on every
// transport.
// The first is outermost.
// Interceptors run with a nil *grpc.ClientConn for inproc: and shm:
// addresses, which no grpc.ClientConn serves.
func WithClientUnaryInterceptor(ints ...grpc.UnaryClientInterceptor) ClientOption {
	return func(c *clientConfig) { c.unary = append(c.unary, ints...) }
}

// WithClientStreamInterceptor adds stream client interceptors, on every
// transport.
// The first is outermost.
func WithClientStreamInterceptor(ints ...grpc.StreamClientInterceptor) ClientOption {
	return func(c *clientConfig) { c.stream = append(c.stream, ints...) }
}

// WithClientStatsHandler adds a client stats handler, such as
// OpenTelemetry's otelgrpc.NewClientHandler, on every transport.
// In-process calls report to it as calls over a socket do.
// So one option gives the same client spans, and propagates the same trace
// context, whatever the address.
// As over a socket, a call that waits for a server, or finds none, reports
// TagRPC, Begin and End too.
// A call made after Close, or with a context that has ended, reports
// nothing: grpc-go fails it before it begins.
func WithClientStatsHandler(h stats.Handler) ClientOption {
	return func(c *clientConfig) { c.stats = append(c.stats, h) }
}

// WithDefaultCallOptions sets call options that every call of the
// connection starts with, on every transport.
// It does what grpc.WithDefaultCallOptions does for grpc-go, with
// grpc.MaxCallRecvMsgSize, say.
// A call's own options come after them and win.
func WithDefaultCallOptions(opts ...grpc.CallOption) ClientOption {
	return func(c *clientConfig) { c.calls = append(c.calls, opts...) }
}

// NewClient returns a connection to the server at addr.
// addr is an address of the grammar of [ParseAddress]:
//   - an inproc: name a [Server] of this process serves;
//   - a shm: address a Server of another process (or this one) serves;
//   - a unix or abstract socket;
//   - HOST:PORT;
//   - any grpc-go target.
//
// As with grpc.NewClient, connections are made when first needed, on every
// transport:
//   - A call to an address nothing serves fails with Unavailable.
//   - With grpc.WaitForReady(true), such a call instead waits for a server
//     until its context ends or the connection is closed.
//   - A call to a Server that listens but does not serve yet waits for it
//     likewise.
//
// Plaintext is the default only where nothing leaves the machine.
// That is judged by what addr says, not by what a name resolves to.
// Such addresses are:
//   - inproc:, unix and abstract sockets, shm:;
//   - loopback and unspecified IP addresses, localhost and :PORT;
//   - dns or passthrough targets of those hosts.
//
// "localhost." is not among them.
// With its trailing dot it is a DNS name, which a DNS server may resolve to
// any address.
// Any other address needs transport credentials
// ([WithClientTransportCredentials]), or NewClient returns an error, as
// grpc.NewClient does without them.
// insecure.NewCredentials() gives plaintext on purpose.
//
// What addr says is where the call goes:
//   - localhost, in any case, and an empty host are dialed on loopback
//     (127.0.0.1, then ::1) and never resolved.
//     RFC 6761 says localhost names loopback.
//     A hosts file without it, or a DNS search domain, would let DNS choose
//     where the call goes.
//   - The same holds for dns and passthrough targets of localhost or of no
//     host (dns:///:PORT, passthrough:///:PORT).
//     It holds whatever DNS server a dns target names.
//   - An address on this machine is dialed without a proxy.
//     Go's proxy rules pass over localhost and loopback addresses only.
//     An HTTPS_PROXY would carry a call to 0.0.0.0 to another machine.
//   - An address on this machine goes through no resolver but one of its
//     connection's own, which answers with the address as written.
//     A resolver registered for dns or passthrough is never asked.
//     Neither is one given with grpc.WithResolvers.
//     (resolver.Register is global, and any package a program imports may
//     call it.)
//     That connection's dialer refuses any other address.
//
// A dialer of your own, grpc.WithContextDialer given through
// [WithGRPCDialOptions], replaces NewClient's:
//   - For an address on this machine, it is called with the address as
//     written.
//     That is HOST:PORT, "localhost:PORT" for localhost and :PORT, and
//     "localhost" for unix and abstract sockets.
//   - Where plaintext is the default, the connection it returns must be to
//     this machine: a unix socket, or TCP whose peer is a loopback address.
//     Any other is closed before a byte is sent.
//     Calls then fail with Unavailable, naming addr.
//     Give transport credentials to dial elsewhere
//     (insecure.NewCredentials() for plaintext on purpose).
func NewClient(addr string, opts ...ClientOption) (ClientConn, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	var cfg clientConfig
	for _, o := range opts {
		o(&cfg)
	}
	switch a.Kind {
	case Inproc:
		return newInprocConn(a.Name, cfg), nil
	case Shm:
		return newShmConn(a, cfg)
	}
	var gopts []grpc.DialOption
	local := a.OnThisMachine()
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
