package echoclient

import (
	"fmt"
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

// The client stacks that call Echo.
const (
	GRPC           = "grpc"             // grpc-go
	Connect        = "connect"          // connect-go in the Connect protocol
	ConnectGRPC    = "connect-grpc"     // connect-go in the gRPC protocol
	ConnectGRPCWeb = "connect-grpc-web" // connect-go in the gRPC-Web protocol
)

// Stacks are the client stacks, grpc-go first.
var Stacks = []string{GRPC, Connect, ConnectGRPC, ConnectGRPCWeb}

// NewGRPC returns a grpc-go client on cc.
// Close closes cc.
// With compress, each call sends gzip.
func NewGRPC(cc localgrpc.ClientConn, compress bool) Client {
	var opts []grpc.CallOption
	if compress {
		opts = append(opts, grpc.UseCompressor(gzip.Name))
	}
	return stackClient{grpcStack{cc, echov1.NewEchoClient(cc), opts}}
}

// NewConnect returns a client of stack, a connect-go one.
// It calls the server that hc reaches at base.
// With compress, each call sends gzip; without, none accepts it.
func NewConnect(stack string, hc *http.Client, base string, compress bool) (Client, error) {
	opts, err := connectOptions(stack, compress)
	if err != nil {
		return nil, err
	}
	return stackClient{connectStack{hc.CloseIdleConnections, echov1connect.NewEchoClient(hc, base, opts...)}}, nil
}

// NewInprocHTTP returns a client of stack, a connect-go one.
// It calls the connect-go server h in-process, through inprochttp.
func NewInprocHTTP(stack string, h http.Handler, compress bool) (Client, error) {
	return NewConnect(stack, &http.Client{Transport: inprochttp.NewTransport(h)}, "http://inproc", compress)
}

// connectOptions are the client options of stack, a connect-go one.
func connectOptions(stack string, compress bool) ([]connect.ClientOption, error) {
	var opts []connect.ClientOption
	switch stack {
	case Connect:
	case ConnectGRPC:
		opts = append(opts, connect.WithGRPC())
	case ConnectGRPCWeb:
		opts = append(opts, connect.WithGRPCWeb())
	default:
		return nil, fmt.Errorf("--stack %q: the client stacks are %s", stack, strings.Join(Stacks, ", "))
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
