package echoclient

import (
	"context"
	"errors"
	"io"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// connectStack is connect-go's client, in any of its protocols.
type connectStack struct {
	closeIdle func()
	echo      echov1connect.EchoClient
}

func (c connectStack) close() { c.closeIdle() }

func (c connectStack) get(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	resp, err := c.echo.Get(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

func (c connectStack) expand(ctx context.Context, req *echov1.EchoRequest, each func(*echov1.EchoResponse) error) error {
	s, err := c.echo.Expand(ctx, connect.NewRequest(req))
	if err != nil {
		return err
	}
	defer s.Close()
	for s.Receive() {
		if err := each(s.Msg()); err != nil {
			return err
		}
	}
	return s.Err()
}

func (c connectStack) collect(ctx context.Context, next Requests) (*echov1.EchoResponse, error) {
	s := c.echo.Collect(ctx)
	if err := sendEach(ctx, next, s.Send); err != nil {
		return nil, err
	}
	resp, err := s.CloseAndReceive()
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

func (c connectStack) update(ctx context.Context, cancel context.CancelFunc, next Requests, each func(*echov1.EchoResponse) error) error {
	s := c.echo.Update(ctx)
	defer s.CloseResponse()
	return bidi(ctx, cancel, next, s.Send, s.CloseRequest, func() error {
		return receiveAll(func() (*echov1.EchoResponse, error) {
			resp, err := s.Receive()
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return resp, err
		}, each)
	})
}
