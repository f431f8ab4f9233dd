// Package callopt carries what a localgrpc connection to an in-process
// channel adds to every call as call options that only package inproc
// understands; other ClientConns ignore them.
package callopt

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// ClientStats adds client-side stats handlers to one call, after the
// channel's own.
type ClientStats struct {
	grpc.EmptyCallOption
	Handlers []stats.Handler
}

// Conn is the connection a call goes through, which may close: its close
// ends the call in flight, as grpc.ClientConn.Close does. A call takes it
// as a *Conn, so that carrying it copies nothing.
type Conn struct {
	grpc.EmptyCallOption
	// Closed ends when the connection closes. Its cause is the error the
	// calls then end with.
	Closed context.Context
}
