package echo

import (
	"context"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

// Server is the Echo service for grpc-go and any grpc.ServiceRegistrar,
// such as an inproc.Channel or a localgrpc.Server.
type Server struct {
	echov1.UnimplementedEchoServer
}

var _ echov1.EchoServer = Server{}

// Get returns the request's text.
func (Server) Get(_ context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return Get(req), nil
}

// Expand sends one response per space-separated word of the request's text.
func (Server) Expand(req *echov1.EchoRequest, stream grpc.ServerStreamingServer[echov1.EchoResponse]) error {
	return Expand(req, stream.Send)
}

// Collect joins the texts of all requests with spaces.
func (Server) Collect(stream grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	resp, err := Collect(stream.Recv)
	if err != nil {
		return err
	}
	return stream.SendAndClose(resp)
}

// Update answers each request with its text as it arrives.
func (Server) Update(stream grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	return Update(stream.Recv, stream.Send)
}
