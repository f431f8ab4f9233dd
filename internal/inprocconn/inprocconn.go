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
}

// Bind returns the client side of ch, an *inproc.Channel, bound to c: a
// connection's interceptor chains end on it. Package inproc sets Bind
// when it is initialized; Bind panics if ch is no *inproc.Channel.
var Bind func(ch grpc.ClientConnInterface, c Conn) grpc.ClientConnInterface

// Refuses returns the error a channel fails a call with before the call
// begins, for its call options and its context's outgoing metadata (a
// codec or compressor not registered, metadata no transport could
// send), or nil. A connection that has no channel yet to take a call
// checks it so before it begins the call for its stats handlers, as
// grpc-go's client does. Package inproc sets Refuses when it is
// initialized.
var Refuses func(ctx context.Context, opts []grpc.CallOption) error
