// Command gateway serves the example's GreeterService as REST/JSON
// through grpc-gateway, whose client reaches the service in-process, and
// as gRPC on the addresses -grpc names, until SIGINT or SIGTERM.
//
// From the repository's root:
//
//	go run ./cmd/examples/gateway/cmd/gateway -http 127.0.0.1:8080 -grpc unix:@greeter
//	curl -d '{"name": "Ada"}' http://127.0.0.1:8080/v1/greet
//	curl 'http://127.0.0.1:8080/v1/names/Ada/greetings?count=3'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/localgrpc/localgrpc/cmd/examples/gateway"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// addrList is a flag that may be given many times, or once with
// addresses separated by commas.
type addrList []string

func (a *addrList) String() string { return strings.Join(*a, ",") }

func (a *addrList) Set(s string) error {
	for addr := range strings.SplitSeq(s, ",") {
		if addr = strings.TrimSpace(addr); addr == "" {
			return errors.New("an empty address")
		}
		*a = append(*a, addr)
	}
	return nil
}

// run is the command with its arguments, until ctx ends; it returns the
// exit status: 0, 1 if serving failed, 2 for a bad command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	httpAddr := fs.String("http", "127.0.0.1:8080", "TCP `address` to serve REST on")
	var grpcAddrs addrList
	fs.Var(&grpcAddrs, "grpc", "`address` to serve gRPC on as well, such as unix:@greeter or 127.0.0.1:9090 (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gateway: unexpected argument %q: addresses go in -http and -grpc\n", fs.Arg(0))
		return 2
	}
	l, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		fmt.Fprintf(stderr, "gateway: -http %s: %v\n", *httpAddr, err)
		return 1
	}
	fmt.Fprintf(stdout, "serving REST on http://%s\n", l.Addr())
	if err := gateway.Run(ctx, l, grpcAddrs...); err != nil {
		fmt.Fprintf(stderr, "gateway: %v\n", err)
		return 1
	}
	return 0
}
