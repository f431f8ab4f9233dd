package echo

import (
	"context"
	"io"

	"connectrpc.com/connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/gen/echo/v1/echov1connect"
)

// ConnectServer is the Echo service for connect-go: mount it with
// echov1connect.NewEchoHandler. It behaves as Server does.
type ConnectServer struct{}

var _ echov1connect.EchoHandler = ConnectServer{}

// Get returns the request's text.
func (ConnectServer) Get(_ context.Context, req *connect.Request[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	return connect.NewResponse(get(req.Msg)), nil
}

// Expand sends one response per space-separated word of the request's text.
func (ConnectServer) Expand(_ context.Context, req *connect.Request[echov1.EchoRequest], stream *connect.ServerStream[echov1.EchoResponse]) error {
	return expand(req.Msg, stream.Send)
}

// Collect joins the texts of all requests with spaces.
func (ConnectServer) Collect(_ context.Context, stream *connect.ClientStream[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	resp, err := collect(func() (*echov1.EchoRequest, error) {
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
func (ConnectServer) Update(_ context.Context, stream *connect.BidiStream[echov1.EchoRequest, echov1.EchoResponse]) error {
	return update(stream.Receive, stream.Send)
}
