package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inprochttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding/gzip"
)

// The client stacks that call Echo: grpc-go, and connect-go in each of its
// three protocols.
const (
	clientGRPC           = "grpc"
	clientConnect        = "connect"
	clientConnectGRPC    = "connect-grpc"
	clientConnectGRPCWeb = "connect-grpc-web"
)

var clientStacks = []string{clientGRPC, clientConnect, clientConnectGRPC, clientConnectGRPCWeb}

// method is one of the Echo API's four.
type method string

const (
	methodGet     method = "get"
	methodExpand  method = "expand"
	methodCollect method = "collect"
	methodUpdate  method = "update"
)

var methods = []method{methodGet, methodExpand, methodCollect, methodUpdate}

// parseMethod takes a method as the command line names it, in any case.
func parseMethod(s string) (method, error) {
	for _, m := range methods {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown method %q: the methods are get, expand, collect and update", s)
}

// clientStreams reports whether m takes a stream of requests.
func (m method) clientStreams() bool { return m == methodCollect || m == methodUpdate }

// requests gives a call's requests in order, then io.EOF.
type requests func(ctx context.Context) (*echov1.EchoRequest, error)

// echoClient calls Echo on one client stack. call sends what next gives
// and hands each response to each as it arrives; it returns the call's
// error, whose code the status package or connect.CodeOf reads.
type echoClient interface {
	call(ctx context.Context, m method, next requests, each func(*echov1.EchoResponse) error) error
	close()
}

// newEchoClient returns a client of stack for the server at addr, secured
// as sec says (nil: plaintext on this machine, as localgrpc.NewClient's
// default).
func newEchoClient(stack, addr string, compress bool, sec *securityFlags) (echoClient, error) {
	if sec == nil {
		sec = &securityFlags{}
	}
	a, err := localgrpc.ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	if stack == clientGRPC {
		var opts []grpc.CallOption
		if compress {
			opts = append(opts, grpc.UseCompressor(gzip.Name))
		}
		copts, err := sec.grpcOptions(a)
		if err != nil {
			return nil, err
		}
		cc, err := localgrpc.NewClient(addr, copts...)
		if err != nil {
			return nil, err
		}
		return stackClient{grpcStack{cc, echov1.NewEchoClient(cc), opts}}, nil
	}
	if _, err := connectOptions(stack, compress); err != nil {
		return nil, err
	}
	hc, base, err := sec.httpClient(addr, a)
	if err != nil {
		return nil, err
	}
	return newConnectClient(stack, hc, base, compress)
}

// newInprocHTTPClient returns a client of stack, a connect-go one, for the
// connect-go server h, called in-process through inprochttp.
func newInprocHTTPClient(stack string, h http.Handler, compress bool) (echoClient, error) {
	return newConnectClient(stack, &http.Client{Transport: inprochttp.NewTransport(h)}, "http://inproc", compress)
}

// newConnectClient returns a client of stack, a connect-go one, for the
// server hc reaches at base.
func newConnectClient(stack string, hc *http.Client, base string, compress bool) (echoClient, error) {
	opts, err := connectOptions(stack, compress)
	if err != nil {
		return nil, err
	}
	return stackClient{connectStack{hc.CloseIdleConnections, echov1connect.NewEchoClient(hc, base, opts...)}}, nil
}

// connectOptions are the client options of stack, a connect-go one.
func connectOptions(stack string, compress bool) ([]connect.ClientOption, error) {
	var opts []connect.ClientOption
	switch stack {
	case clientConnect:
	case clientConnectGRPC:
		opts = append(opts, connect.WithGRPC())
	case clientConnectGRPCWeb:
		opts = append(opts, connect.WithGRPCWeb())
	default:
		return nil, fmt.Errorf("--stack %q: the client stacks are %s", stack, strings.Join(clientStacks, ", "))
	}
	if compress {
		opts = append(opts, connect.WithSendGzip())
	} else {
		// connect-go accepts gzip unless told not to; off, a server
		// that compresses does not for us.
		opts = append(opts, connect.WithAcceptCompression("gzip", nil, nil))
	}
	return opts, nil
}

// one takes the single request of a method that is not client streaming.
func one(ctx context.Context, m method, next requests) (*echov1.EchoRequest, error) {
	req, err := next(ctx)
	if err == io.EOF {
		return nil, inputError{fmt.Errorf("%s takes one request, and none was given", m)}
	}
	if err != nil {
		return nil, inputError{err}
	}
	if _, err := next(ctx); err != io.EOF {
		if err != nil {
			return nil, inputError{err}
		}
		return nil, inputError{fmt.Errorf("%s takes one request, and more were given", m)}
	}
	return req, nil
}

// sendEach sends what next gives until its end. A send that fails means
// the call ended, and the receiving side tells why, so sendEach stops
// without an error; its errors are the input's.
func sendEach(ctx context.Context, next requests, send func(*echov1.EchoRequest) error) error {
	for {
		req, err := next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // the call ended; the receiving side tells why
			}
			return inputError{err}
		}
		if send(req) != nil {
			return nil
		}
	}
}

// bidi runs a bidirectional call: it sends on a goroutine of its own while
// receive receives, closing the sending side at the end of the input. Bad
// input cancels the call and is the error; otherwise the call's is.
func bidi(ctx context.Context, cancel context.CancelFunc, next requests, send func(*echov1.EchoRequest) error, closeSend func() error, receive func() error) error {
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
// given their requests. call does the rest, the same for every stack.
type echoStack interface {
	get(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error)
	expand(ctx context.Context, req *echov1.EchoRequest, each func(*echov1.EchoResponse) error) error
	collect(ctx context.Context, next requests) (*echov1.EchoResponse, error)
	update(ctx context.Context, cancel context.CancelFunc, next requests, each func(*echov1.EchoResponse) error) error
	close()
}

// stackClient is an echoClient on an echoStack.
type stackClient struct{ echoStack }

func (c stackClient) call(ctx context.Context, m method, next requests, each func(*echov1.EchoResponse) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	switch m {
	case methodCollect:
		resp, err := c.collect(ctx, next)
		if err != nil {
			return err
		}
		return each(resp)
	case methodUpdate:
		return c.update(ctx, cancel, next, each)
	}
	req, err := one(ctx, m, next)
	if err != nil {
		return err
	}
	if m == methodExpand {
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

func (g grpcStack) collect(ctx context.Context, next requests) (*echov1.EchoResponse, error) {
	s, err := g.echo.Collect(ctx, g.opts...)
	if err != nil {
		return nil, err
	}
	if err := sendEach(ctx, next, s.Send); err != nil {
		return nil, err
	}
	return s.CloseAndRecv()
}

func (g grpcStack) update(ctx context.Context, cancel context.CancelFunc, next requests, each func(*echov1.EchoResponse) error) error {
	s, err := g.echo.Update(ctx, g.opts...)
	if err != nil {
		return err
	}
	return bidi(ctx, cancel, next, s.Send, s.CloseSend, func() error { return receiveAll(s.Recv, each) })
}

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

func (c connectStack) collect(ctx context.Context, next requests) (*echov1.EchoResponse, error) {
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

func (c connectStack) update(ctx context.Context, cancel context.CancelFunc, next requests, each func(*echov1.EchoResponse) error) error {
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

// An inputError is an error of the requests a call was given, not of the
// call itself.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }
