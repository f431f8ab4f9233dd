package echoclient

import (
	"context"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

// grpcStack is grpc-go's client.
type grpcStack struct {
	cc   localgrpc.ClientConn
	echo echov1.EchoClient
	opts []grpc.CallOption
}

func (g grpcStack) close() { g.cc.Close() }

func (g grpcStack) get(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return g.echo.Get(ctx, req, g.opts...)
}

func (g grpcStack) expand(ctx context.Context, req *echov1.EchoRequest, each func(*echov1.EchoResponse) error) error {
	s, err := g.echo.Expand(ctx, req, g.opts...)
	if err != nil {
		return err
	}
	return receiveAll(s.Recv, each)
}

func (g grpcStack) collect(ctx context.Context, next Requests) (*echov1.EchoResponse, error) {
	s, err := g.echo.Collect(ctx, g.opts...)
	if err != nil {
		return nil, err
	}
	if err := sendEach(ctx, next, s.Send); err != nil {
		return nil, err
	}
	return s.CloseAndRecv()
}

func (g grpcStack) update(ctx context.Context, cancel context.CancelFunc, next Requests, each func(*echov1.EchoResponse) error) error {
	s, err := g.echo.Update(ctx, g.opts...)
	if err != nil {
		return err
	}
	return bidi(ctx, cancel, next, s.Send, s.CloseSend, func() error { return receiveAll(s.Recv, each) })
}
