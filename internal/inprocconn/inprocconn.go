// Package inprocconn binds a connection of localgrpc's NewClient to the
// in-process channel of the server it reaches. The channel's calls
// through the binding report to the connection's stats handlers and end
// when the connection closes, as a grpc.ClientConn's calls do. Nothing
// of the connection travels in call options, which a client interceptor
// would see and could drop.
package inprocconn

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
)

// Conn is what a connection gives every call made through it.
type Conn struct {
	// Stats are the connection's client stats handlers. They hear a call
	// after the channel's own.
	Stats []stats.Handler
	// Closed ends when the connection closes. Its cause is the error the
	// calls in flight then end with.
	Closed context.Context
	// Peer, when set, is the other end of the calls: a process across a
	// socket whose calls a transport passes to the channel (server side),
	// or whose server the channel's catch-all forwards to (client side).
	// The handler's peer.FromContext and the grpc.Peer call option give
	// it in place of the channel's own in-process peer.
	Peer *peer.Peer
	// Encode makes every message of the calls cross in its encoded form,
	// by the call's codec, as over a network; a transport then sends and
	// receives *Encoded in place of typed messages.
	Encode bool
	// Drains says the calls are a transport's that stops taking calls on
	// its own when its server drains (it tells its peer, and waits for
	// the calls the peer sent before it heard): the channel takes them
	// while it drains, from Drain until GracefulStop.
	Drains bool
	// InlineUnary runs the handlers of unary calls on their callers'
	// goroutines, whatever the channel's execution mode: a transport's
	// goroutine that serves one call then is the handler's.
	InlineUnary bool
}

// Forward makes ch, an *inproc.Channel with no services, take every call
// to the handlers of a transport's client side: unary for calls through
// Invoke, stream for calls through NewStream. The handlers find the
// method with grpc.Method or grpc.MethodFromServerStream. It is called
// before ch takes a call. Package inproc sets Forward when it is
// initialized.
var Forward func(ch grpc.ClientConnInterface, unary grpc.MethodHandler, stream grpc.StreamHandler, open OpenFunc)

// OpenFunc, when a transport gives one to Forward, is called for each
// stream the channel forwards, with the handler's context, on the
// caller's goroutine before NewStream returns: a transport opens the call
// on its wire there, as grpc-go's client sends a stream's header before
// its first message, so that the server hears of the call however soon
// the client ends it. The stream handler finds what it returned with
// Opened.
type OpenFunc func(ctx context.Context) any

// Opened returns what the forwarding channel's OpenFunc returned for the
// stream whose handler has ctx, or nil. Package inproc sets Opened when
// it is initialized.
var Opened func(ctx context.Context) any

// Request returns the request metadata of the call whose handler has ctx,
// as its client sent it, and its content subtype: what a forward handler
// sends on, without the copy metadata.FromIncomingContext makes. The
// metadata may hold the keys the channel adds for its handler
// (":authority", "content-type", "user-agent"); it must not be changed.
// Package inproc sets Request when it is initialized.
var Request func(ctx context.Context) (md metadata.MD, subtype string)

// Follows returns the context whose end ends the context ctx of a unary
// handler that runs on its caller's goroutine: the caller's own, to wait
// on without the cost of the handler's Done. It returns nil for any
// other handler. Package inproc sets Follows when it is initialized.
var Follows func(ctx context.Context) context.Context

// Encoded is a message in its encoded form: what a transport sends and
// receives on a connection bound with Encode.
type Encoded struct {
	Data mem.BufferSlice
	// Oversize, when above 0, stands for a message of that many bytes
	// that the transport did not gather, being over Limit, the receiver's
	// limit: the channel refuses it as a receiver over its limit does.
	Oversize, Limit int
	// Lost, when set, stands for a request that never arrived: the
	// client reset the call before it came. The channel sends it as a
	// request its client refused to send, which fails with Lost.
	Lost error
}

// Bind returns the client side of ch, an *inproc.Channel, bound to c: a
// connection's interceptor chains end on it. Package inproc sets Bind
// when it is initialized; Bind panics if ch is no *inproc.Channel.
var Bind func(ch grpc.ClientConnInterface, c Conn) grpc.ClientConnInterface

// Drain has ch, an *inproc.Channel, refuse new calls but those of
// bindings that drain on their own (see Conn.Drains), without waiting:
// its GracefulStop then waits for what is in flight. Package inproc sets
// Drain when it is initialized.
var Drain func(ch grpc.ClientConnInterface)

// Refuses returns the error a channel fails a call with before the call
// begins, for its call options and its context's outgoing metadata (a
// codec or compressor not registered, metadata no transport could
// send), or nil. A connection that has no channel yet to take a call
// checks it so before it begins the call for its stats handlers, as
// grpc-go's client does. Package inproc sets Refuses when it is
// initialized.
var Refuses func(ctx context.Context, opts []grpc.CallOption) error
