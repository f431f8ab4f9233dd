package localgrpc_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
)

// One Server serves the same service in-process and on a unix socket; the
// same generated client calls either, chosen by address alone.
func Example() {
	dir, err := os.MkdirTemp("", "localgrpc-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	srv := localgrpc.NewServer()
	echov1.RegisterEchoServer(srv, echo.Server{})
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, "inproc:echo-example", "unix:"+filepath.Join(dir, "echo.sock")) }()
	<-srv.Ready()

	for _, addr := range srv.Addrs() {
		cc, err := localgrpc.Dial(addr)
		if err != nil {
			log.Fatal(err)
		}
		resp, err := echov1.NewEchoClient(cc).Get(context.Background(), &echov1.EchoRequest{Text: "hi"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(filepath.Base(addr), resp.GetText())
		cc.Close()
	}
	stop()
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	// Output:
	// inproc:echo-example hi
	// echo.sock hi
}
