package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/localgrpc/localgrpc"
	greeterv1 "github.com/localgrpc/localgrpc/cmd/examples/gateway/gen/greeter/v1"
)

// runs numbers the in-process names of the servers Run starts, since
// inproc: names are the process's and a test may call Run twice.
var runs atomic.Int64

// shutdownGrace is how long Run lets REST calls in flight finish once
// its context ends; a stream of greetings may never end by itself.
const shutdownGrace = 5 * time.Second

// Run serves the GreeterService on a localgrpc.Server, in-process and on
// grpcAddrs (any address localgrpc.Server.Listen takes, or none), and
// grpc-gateway's REST front over HTTP on l, its client connection
// in-process. It returns once ctx has ended and both have stopped, or
// at the first error of either; l is closed in every case.
func Run(ctx context.Context, l net.Listener, grpcAddrs ...string) error {
	srv := localgrpc.NewServer()
	greeterv1.RegisterGreeterServiceServer(srv, Greeter{})
	self := fmt.Sprintf("inproc:greeter-gateway-%d", runs.Add(1))
	if err := srv.Listen(append([]string{self}, grpcAddrs...)...); err != nil {
		l.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	cc, err := localgrpc.NewClient(self)
	if err != nil {
		cancel()
		l.Close()
		return errors.Join(err, <-served)
	}
	defer cc.Close()
	mux := runtime.NewServeMux()
	// The context only scopes the registration: each REST call is made
	// with its request's.
	if err := greeterv1.RegisterGreeterServiceHandlerClient(ctx, mux, greeterv1.NewGreeterServiceClient(cc)); err != nil {
		cancel()
		l.Close()
		return errors.Join(err, <-served)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	httpDone := make(chan error, 1)
	go func() { httpDone <- hs.Serve(l) }()

	var httpErr error
	select {
	case <-ctx.Done():
	case httpErr = <-httpDone:
		cancel()
	}
	grace, cancelGrace := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancelGrace()
	if err := hs.Shutdown(grace); err != nil {
		hs.Close()
	}
	if httpErr == nil {
		httpErr = <-httpDone
	}
	if errors.Is(httpErr, http.ErrServerClosed) {
		httpErr = nil
	}
	return errors.Join(httpErr, <-served)
}
