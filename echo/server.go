package echo

import (
	"context"
	"errors"
	"io"
	"strings"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

// Server is the Echo service for grpc-go and any grpc.ServiceRegistrar.
type Server struct {
	echov1.UnimplementedEchoServer
}

var _ echov1.EchoServer = Server{}

// Get returns the request's text.
func (Server) Get(_ context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return &echov1.EchoResponse{Text: req.GetText()}, nil
}

// Expand sends one response per space-separated word of the request's text.
func (Server) Expand(req *echov1.EchoRequest, stream grpc.ServerStreamingServer[echov1.EchoResponse]) error {
	for _, w := range strings.Fields(req.GetText()) {
		if err := stream.Send(&echov1.EchoResponse{Text: w}); err != nil {
			return err
		}
	}
	return nil
}

// Collect joins the texts of all requests with spaces.
func (Server) Collect(stream grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	var texts []string
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&echov1.EchoResponse{Text: strings.Join(texts, " ")})
		}
		if err != nil {
			return err
		}
		texts = append(texts, req.GetText())
	}
}

// Update answers each request with its text as it arrives.
func (Server) Update(stream grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&echov1.EchoResponse{Text: req.GetText()}); err != nil {
			return err
		}
	}
}
