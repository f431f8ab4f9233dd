package bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/gen/list/v1/listv1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/connectserve"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inprochttp"
	"google.golang.org/grpc"
)

// The connect-go impls serve the workloads' services with connect-go's
// handlers and call them with connect-go's clients in the gRPC protocol,
// the one grpc-go speaks too, with compression off (connect-go would gzip
// every message otherwise, and the suite would measure gzip):
//
//   - "connect-inproc" calls the handlers in-process through inprochttp;
//   - "connect-unix" over a unix socket with HTTP/2 (h2c), served as the
//     CLI serves connect-go (connectserve) and reached through
//     localgrpc.HTTPClient.
//
// They take part in the workloads of ListStrings and Echo; the handlers
// are the workloads' own grpc-go implementations behind connect-go's
// stream types, and the clients connect-go's behind grpc-go's interfaces,
// so that the workloads' code is the same for every impl.

const noConnect = "the connect-go impls serve ListStrings and Echo only"

// connectSkips are the workloads the connect-go impls take no part in.
var connectSkips = map[string]string{FanOut: noConn, Batching: noConnect, Series: noConnect}

// connectInprocClients is impl "connect-inproc".
func connectInprocClients(_ testing.TB, srv servers) (clients, error) {
	mux := http.NewServeMux()
	mux.Handle(listv1connect.NewListStringsHandler(connectList{srv.list}))
	mux.Handle(echov1connect.NewEchoHandler(connectEcho{srv: srv.echo}))
	return connectClients(&http.Client{Transport: inprochttp.NewTransport(mux)}, "http://inproc"), nil
}

// connectUnixClients is impl "connect-unix". The socket's directory is
// short-named because socket paths are limited to about 100 bytes.
func connectUnixClients(tb testing.TB, srv servers) (clients, error) {
	dir, err := os.MkdirTemp("", "localgrpc-bench-")
	if err != nil {
		return clients{}, err
	}
	tb.Cleanup(func() { os.RemoveAll(dir) }) // runs after the server stops
	listPath, list := listv1connect.NewListStringsHandler(connectList{srv.list})
	echoPath, echo := echov1connect.NewEchoHandler(connectEcho{srv: srv.echo})
	s := connectserve.New([]connectserve.Service{
		{Name: listv1connect.ListStringsName, Path: listPath, Handler: list},
		{Name: echov1connect.EchoName, Path: echoPath, Handler: echo},
	}, 0o600)
	if err := s.Listen("unix:" + filepath.Join(dir, "s.sock")); err != nil {
		return clients{}, err
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	hc, base, err := localgrpc.HTTPClient(s.Addrs()[0])
	tb.Cleanup(func() {
		if hc != nil {
			hc.CloseIdleConnections()
		}
		// The workloads have ended their calls by now; a case that
		// failed mid-call must not hang the suite.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.Shutdown(ctx)
		<-served
	})
	if err != nil {
		return clients{}, err
	}
	return connectClients(hc, base), nil
}

// connectClients are the workloads' clients of the connect-go handlers
// that hc reaches at base.
func connectClients(hc *http.Client, base string) clients {
	opts := []connect.ClientOption{connect.WithGRPC(), connect.WithAcceptCompression("gzip", nil, nil)}
	echo := connectEchoClient{echov1connect.NewEchoClient(hc, base, opts...)}
	return clients{
		list:   connectListClient{listv1connect.NewListStringsClient(hc, base, opts...)},
		get:    echo,
		update: echo,
	}
}

// connectList serves a grpc-go ListStringsServer with connect-go.
type connectList struct{ srv listv1.ListStringsServer }

func (c connectList) List(ctx context.Context, req *connect.Request[listv1.ListRequest], stream *connect.ServerStream[listv1.ListResponse]) error {
	return c.srv.List(req.Msg, &connectServerStream[listv1.ListResponse]{ctx: ctx, send: stream.Send})
}

// connectEcho serves the methods of a grpc-go EchoServer that the
// workloads call with connect-go.
type connectEcho struct {
	echov1connect.UnimplementedEchoHandler
	srv echov1.EchoServer
}

func (c connectEcho) Get(ctx context.Context, req *connect.Request[echov1.EchoRequest]) (*connect.Response[echov1.EchoResponse], error) {
	resp, err := c.srv.Get(ctx, req.Msg)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(resp), nil
}

func (c connectEcho) Update(ctx context.Context, stream *connect.BidiStream[echov1.EchoRequest, echov1.EchoResponse]) error {
	return c.srv.Update(&connectBidiServer{connectServerStream[echov1.EchoResponse]{ctx: ctx, send: stream.Send}, stream})
}

// connectServerStream is the grpc-go server stream a handler sends on,
// carried by a connect-go stream's send. It implements what the handlers
// call; the rest of grpc.ServerStream is the nil interface it embeds, as
// the hand-written clients' streams do (see chanClients).
type connectServerStream[Res any] struct {
	grpc.ServerStream
	ctx  context.Context
	send func(*Res) error
}

func (s *connectServerStream[Res]) Context() context.Context { return s.ctx }
func (s *connectServerStream[Res]) Send(m *Res) error        { return s.send(m) }

// connectBidiServer is the grpc-go bidi stream of Echo's Update handler,
// carried by a connect-go one.
type connectBidiServer struct {
	connectServerStream[echov1.EchoResponse]
	stream *connect.BidiStream[echov1.EchoRequest, echov1.EchoResponse]
}

func (s *connectBidiServer) Recv() (*echov1.EchoRequest, error) { return s.stream.Receive() }

// connectListClient is the workloads' ListStrings client on connect-go's.
type connectListClient struct {
	c listv1connect.ListStringsClient
}

func (c connectListClient) List(ctx context.Context, in *listv1.ListRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
	s, err := c.c.List(ctx, connect.NewRequest(in))
	if err != nil {
		return nil, err
	}
	return &connectRecvStream[listv1.ListResponse]{s: s}, nil
}

// connectRecvStream is a grpc-go client stream that receives from a
// connect-go server stream, which it closes at the end.
type connectRecvStream[Res any] struct {
	grpc.ClientStream
	s *connect.ServerStreamForClient[Res]
}

func (r *connectRecvStream[Res]) Recv() (*Res, error) {
	if r.s.Receive() {
		return r.s.Msg(), nil
	}
	err := r.s.Err()
	r.s.Close()
	if err == nil {
		return nil, io.EOF
	}
	return nil, err
}

// connectEchoClient is the workloads' Echo client on connect-go's.
type connectEchoClient struct{ c echov1connect.EchoClient }

func (c connectEchoClient) Get(ctx context.Context, in *echov1.EchoRequest, _ ...grpc.CallOption) (*echov1.EchoResponse, error) {
	resp, err := c.c.Get(ctx, connect.NewRequest(in))
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

func (c connectEchoClient) Update(ctx context.Context, _ ...grpc.CallOption) (grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse], error) {
	return &connectBidiClient{s: c.c.Update(ctx)}, nil
}

// connectBidiClient is a grpc-go bidi client stream on a connect-go one.
type connectBidiClient struct {
	grpc.ClientStream
	s *connect.BidiStreamForClient[echov1.EchoRequest, echov1.EchoResponse]
}

func (b *connectBidiClient) Send(m *echov1.EchoRequest) error { return b.s.Send(m) }
func (b *connectBidiClient) CloseSend() error                 { return b.s.CloseRequest() }

func (b *connectBidiClient) Recv() (*echov1.EchoResponse, error) {
	m, err := b.s.Receive()
	if err == nil {
		return m, nil
	}
	b.s.CloseResponse()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	return nil, err
}
