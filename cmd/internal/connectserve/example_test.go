package connectserve_test

import (
	"context"
	"fmt"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"

	"connectrpc.com/connect"
	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/connectserve"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// Serving Echo on connect-go on a TCP port, and calling it with the gRPC
// protocol.
func Example() {
	path, handler := echov1connect.NewEchoHandler(echoconnect.Server{})
	srv := connectserve.New([]connectserve.Service{{Name: echov1connect.EchoName, Path: path, Handler: handler}}, 0o600)
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		panic(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	defer func() {
		srv.Shutdown(context.Background())
		<-served
	}()

	hc, base, err := localgrpc.HTTPClient(srv.Addrs()[0])
	if err != nil {
		panic(err)
	}
	defer hc.CloseIdleConnections()
	client := echov1connect.NewEchoClient(hc, base, connect.WithGRPC())
	resp, err := client.Get(context.Background(), connect.NewRequest(&echov1.EchoRequest{Text: "hello"}))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Msg.GetText())
	// Output: hello
}
