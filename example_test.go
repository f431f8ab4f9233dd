package localgrpc_test

import (
	"context"
	"fmt"
	"log"
	"net"
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
	// Once Listen returns, every address can be dialed.
	if err := srv.Listen("inproc:echo-example", "unix:"+filepath.Join(dir, "echo.sock")); err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	for _, addr := range srv.Addrs() {
		cc, err := localgrpc.NewClient(addr)
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

// A listener made elsewhere, such as one systemd's socket activation
// passes on, is served beside the Server's own addresses.
func ExampleServer_AddListener() {
	dir, err := os.MkdirTemp("", "localgrpc-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// With socket activation: listeners, err := activation.Listeners().
	l, err := net.Listen("unix", filepath.Join(dir, "activated.sock"))
	if err != nil {
		log.Fatal(err)
	}

	srv := localgrpc.NewServer()
	echov1.RegisterEchoServer(srv, echo.Server{})
	if err := srv.AddListener(l); err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	defer func() {
		srv.GracefulStop()
		<-served
	}()

	cc, err := localgrpc.NewClient(srv.Addrs()[0])
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	resp, err := echov1.NewEchoClient(cc).Get(context.Background(), &echov1.EchoRequest{Text: "activated"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetText())
	// Output: activated
}

// One Server on every kind of address, and a client of one of them. (The
// README shows this code; it is compiled, not run, since it binds fixed
// addresses.)
func ExampleServer_Listen() {
	ctx := context.Background()
	srv := localgrpc.NewServer(localgrpc.WithHealth(), localgrpc.WithReflection())
	echov1.RegisterEchoServer(srv, echo.Server{})
	// Binds every address or none; once it returns, each can be dialed.
	if err := srv.Listen("inproc:echo", "unix:/tmp/echo.sock", "unix:@echo", "127.0.0.1:8080"); err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ctx) // until ctx ends, Stop or GracefulStop

	cc, err := localgrpc.NewClient("unix:@echo") // or "inproc:echo", "127.0.0.1:8080", "dns:///host:443"
	if err != nil {
		log.Fatal(err)
	}
	client := echov1.NewEchoClient(cc)
	_ = client
}

// A server of Go clients in other processes of the machine, over shm:,
// and of any other client over a unix socket. (Compiled, not run: it
// binds fixed addresses.)
func Example_shm() {
	ctx := context.Background()
	srv := localgrpc.NewServer()
	echov1.RegisterEchoServer(srv, echo.Server{})
	// shm: for Go clients, unix: beside it for any other.
	if err := srv.Listen("shm:@echo", "unix:@echo-grpc"); err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ctx)

	cc, err := localgrpc.NewClient("shm:@echo") // in another process; or "shm:/run/echo.sock"
	if err != nil {
		log.Fatal(err)
	}
	defer cc.Close()
	resp, err := echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{Text: "hi"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetText())
}
