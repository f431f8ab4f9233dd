package gateway

import (
	"context"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	greeterv1 "github.com/localgrpc/localgrpc/cmd/examples/gateway/gen/greeter/v1"
	"google.golang.org/grpc"
)

// NewGateway returns grpc-gateway's REST/JSON reverse proxy for the
// GreeterService that cc reaches, with opts for its mux. Give it
// localgrpc.NewClient("inproc:NAME") and every REST call becomes an
// in-process gRPC call, with all that a socket would give it: the
// server's interceptors and stats handlers, metadata both ways, server
// streaming, the deadline of a Grpc-Timeout header, and the client's
// disconnection cancelling the handler.
//
// It registers with RegisterGreeterServiceHandlerClient, not
// RegisterGreeterServiceHandlerServer, which calls the implementation
// directly: that one refuses server streams and runs none of the
// server's interceptors or stats handlers.
func NewGateway(cc grpc.ClientConnInterface, opts ...runtime.ServeMuxOption) (*runtime.ServeMux, error) {
	mux := runtime.NewServeMux(opts...)
	// The context only scopes the registration: each handler calls with
	// its request's context.
	if err := greeterv1.RegisterGreeterServiceHandlerClient(context.Background(), mux, greeterv1.NewGreeterServiceClient(cc)); err != nil {
		return nil, err
	}
	return mux, nil
}
