package echoclient

import (
	"context"
	"fmt"
	"io"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// A Client calls Echo on one client stack.
type Client interface {
	// Call sends what next gives and hands each response to each as it
	// arrives. It returns the call's error, whose code the status
	// package or connect.CodeOf reads, or an [InputError].
	Call(ctx context.Context, m Method, next Requests, each func(*echov1.EchoResponse) error) error
	// Close releases the client's connections.
	Close()
}

// one takes the single request of a method that is not client streaming.
func one(ctx context.Context, m Method, next Requests) (*echov1.EchoRequest, error) {
	req, err := next(ctx)
	if err == io.EOF {
		return nil, InputError{fmt.Errorf("%s takes one request, and none was given", m)}
	}
	if err != nil {
		return nil, InputError{err}
	}
	if _, err := next(ctx); err != io.EOF {
		if err != nil {
			return nil, InputError{err}
		}
		return nil, InputError{fmt.Errorf("%s takes one request, and more were given", m)}
	}
	return req, nil
}

// sendEach sends what next gives until its end. A send that fails means
// the call ended, and the receiving side tells why, so sendEach stops
// without an error; its errors are the input's.
func sendEach(ctx context.Context, next Requests, send func(*echov1.EchoRequest) error) error {
	for {
		req, err := next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // the call ended; the receiving side tells why
			}
			return InputError{err}
		}
		if send(req) != nil {
			return nil
		}
	}
}

// bidi runs a bidirectional call: it sends on a goroutine of its own while
// receive receives, closing the sending side at the end of the input. Bad
// input cancels the call and is the error; otherwise the call's is.
func bidi(ctx context.Context, cancel context.CancelFunc, next Requests, send func(*echov1.EchoRequest) error, closeSend func() error, receive func() error) error {
	sent := make(chan error, 1)
	go func() {
		err := sendEach(ctx, next, send)
		if err != nil {
			cancel()
		} else {
			closeSend() // if it fails, the call did: receive tells
		}
		sent <- err
	}()
	received := receive()
	cancel() // a call that ended before its input stops the sender
	if err := <-sent; err != nil {
		return err
	}
	return received
}

// echoStack is what each client stack does its own way: the four calls,
// given their requests. Call does the rest, the same for every stack.
type echoStack interface {
	get(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error)
	expand(ctx context.Context, req *echov1.EchoRequest, each func(*echov1.EchoResponse) error) error
	collect(ctx context.Context, next Requests) (*echov1.EchoResponse, error)
	update(ctx context.Context, cancel context.CancelFunc, next Requests, each func(*echov1.EchoResponse) error) error
	close()
}

// stackClient is a Client on an echoStack.
type stackClient struct{ echoStack }

func (c stackClient) Close() { c.close() }

func (c stackClient) Call(ctx context.Context, m Method, next Requests, each func(*echov1.EchoResponse) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	switch m {
	case Collect:
		resp, err := c.collect(ctx, next)
		if err != nil {
			return err
		}
		return each(resp)
	case Update:
		return c.update(ctx, cancel, next, each)
	}
	req, err := one(ctx, m, next)
	if err != nil {
		return err
	}
	if m == Expand {
		return c.expand(ctx, req, each)
	}
	resp, err := c.get(ctx, req)
	if err != nil {
		return err
	}
	return each(resp)
}

// receiveAll hands each message recv gives to each, until the end.
func receiveAll(recv func() (*echov1.EchoResponse, error), each func(*echov1.EchoResponse) error) error {
	for {
		resp, err := recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := each(resp); err != nil {
			return err
		}
	}
}
