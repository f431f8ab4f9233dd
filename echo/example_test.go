package echo_test

import (
	"context"
	"fmt"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
)

func Example() {
	ch := inproc.New()
	defer ch.Stop()
	echov1.RegisterEchoServer(ch, echo.Server{})
	client := echov1.NewEchoClient(ch)

	stream, err := client.Expand(context.Background(), &echov1.EchoRequest{Text: "one two three"})
	if err != nil {
		panic(err)
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			break
		}
		fmt.Println(resp.GetText())
	}
	// Output:
	// one
	// two
	// three
}
