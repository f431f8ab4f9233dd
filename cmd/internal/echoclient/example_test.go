package echoclient_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/localgrpc/localgrpc/cmd/gen/echo/v1/echov1connect"
	"github.com/localgrpc/localgrpc/cmd/internal/echoclient"
	"github.com/localgrpc/localgrpc/cmd/internal/echoconnect"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// Calling Expand with connect-go's gRPC protocol, in-process: each word
// of the request's text comes back as a response of its own.
func Example() {
	mux := http.NewServeMux()
	mux.Handle(echov1connect.NewEchoHandler(echoconnect.Server{}))
	client, err := echoclient.NewInprocHTTP(echoclient.ConnectGRPC, mux, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	reqs := echoclient.Repeated(echoclient.Expand, "hello big world", 1)
	err = client.Call(context.Background(), echoclient.Expand, echoclient.List(reqs), func(resp *echov1.EchoResponse) error {
		fmt.Println(resp.GetText())
		return nil
	})
	fmt.Println("error:", err)
	// Output:
	// hello
	// big
	// world
	// error: <nil>
}
