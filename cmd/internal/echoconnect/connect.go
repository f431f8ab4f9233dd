package echoconnect

import (
	"context"
	"io"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// Server is the Echo service for connect-go: mount it with
// echov1connect.NewEchoHandler. It behaves as echo.Server does on grpc-go.
type Server struct{}

var _ echov1connect.EchoHandler = Server{}

// Get returns the request's text.
func (Server) Get(_ context.Context, req *connect.Request[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	return connect.NewResponse(echo.Get(req.Msg)), nil
}

// Expand sends one response per space-separated word of the request's text.
func (Server) Expand(_ context.Context, req *connect.Request[echov1.EchoRequest], stream *connect.ServerStream[echov1.EchoResponse]) error {
	return echo.Expand(req.Msg, stream.Send)
}

// Collect joins the texts of all requests with spaces.
func (Server) Collect(_ context.Context, stream *connect.ClientStream[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	resp, err := echo.Collect(func() (*echov1.EchoRequest, error) {
		if stream.Receive() {
			return stream.Msg(), nil
		}
		if err := stream.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(resp), nil
}

// Update answers each request with its text as it arrives.
func (Server) Update(_ context.Context, stream *connect.BidiStream[echov1.EchoRequest, echov1.EchoResponse]) error {
	return echo.Update(stream.Receive, stream.Send)
}
