package inproc_test

import (
	"context"
	"fmt"
	"log"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// A Channel serves generated servers to generated clients, with the
// interceptors and metadata they would see over a network.
func Example() {
	logMethod := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		fmt.Println("server:", info.FullMethod, md.Get("caller"))
		return handler(ctx, req)
	}
	ch := inproc.New(
		inproc.WithCopy(inproc.Share),
		inproc.WithServerUnaryInterceptor(logMethod),
	)
	defer ch.Stop()
	echov1.RegisterEchoServer(ch, echo.Server{})

	client := echov1.NewEchoClient(ch)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "caller", "example")
	resp, err := client.Get(ctx, &echov1.EchoRequest{Text: "hello"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("client:", resp.GetText())
	// Output:
	// server: /echo.v1.Echo/Get [example]
	// client: hello
}

// CallCopy lets one call share its messages on a Channel that clones them.
func ExampleCallCopy() {
	ch := inproc.New() // Clone by default
	defer ch.Stop()
	echov1.RegisterEchoServer(ch, echo.Server{})

	stream, err := echov1.NewEchoClient(ch).Expand(context.Background(),
		&echov1.EchoRequest{Text: "a b c"}, inproc.CallCopy(inproc.Share))
	if err != nil {
		log.Fatal(err)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			break
		}
		fmt.Print(resp.GetText(), " ")
	}
	fmt.Println()
	// Output: a b c
}

// A Channel is a grpc.ServiceRegistrar to register a generated server on
// and a grpc.ClientConnInterface to build a generated client from. (The
// README shows this code.)
func ExampleNew() {
	ctx := context.Background()
	ch := inproc.New() // or inproc.New(inproc.WithCopy(inproc.Share))
	defer ch.Stop()
	echov1.RegisterEchoServer(ch, echo.Server{}) // a Channel is a grpc.ServiceRegistrar
	client := echov1.NewEchoClient(ch)           // and a grpc.ClientConnInterface

	resp, err := client.Get(ctx, &echov1.EchoRequest{Text: "hello"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetText())
	// Output: hello
}
