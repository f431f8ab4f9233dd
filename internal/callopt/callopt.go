// Package callopt carries what a localgrpc connection to an in-process
// channel adds to every call as call options that only package inproc
// understands; other ClientConns ignore them.
package callopt

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// ClientStats adds client-side stats handlers to one call, after the
// channel's own.
type ClientStats struct {
	grpc.EmptyCallOption
	Handlers []stats.Handler
}
