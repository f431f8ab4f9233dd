package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/echo"
	"google.golang.org/grpc"
)

// A process started with childEnv set is a server process (see
// startChild): it serves until its standard input closes, then exits,
// before the program's main runs. That way the test binary and the CLI
// both serve with no entry point of their own.
func init() {
	js, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	os.Unsetenv(childEnv) // not inherited by what it starts
	os.Exit(runChild(js))
}

// runChild serves what js, a childSpec, says until standard input closes.
func runChild(js string) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(js), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", childEnv, err)
		return 2
	}
	stop, err := serveChild(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(childReady)
	io.Copy(io.Discard, os.Stdin)
	stop()
	return 0
}

// serveChild starts serving spec and returns what stops it.
func serveChild(spec childSpec) (stop func(), err error) {
	list := &listServer{}
	if s := spec.List; s.N > 0 {
		list = newListServer(s.N, s.Size, s.PerMsg)
	}
	srv := servers{list: list, echo: echo.Server{}}
	switch spec.Kind {
	case "grpc":
		return serveChildGRPC(spec.Addr, srv)
	case "localgrpc":
		s := localgrpc.NewServer()
		srv.registerOn(s)
		if err := s.Listen(spec.Addr); err != nil {
			return nil, err
		}
		served := make(chan struct{})
		go func() {
			defer close(served)
			s.Serve(context.Background())
		}()
		return func() { s.Stop(); <-served }, nil
	case "socketpair":
		return serveFloorSocketpair()
	case "ring":
		return serveFloorRing()
	}
	return nil, fmt.Errorf("%s: no server of kind %q", childEnv, spec.Kind)
}

// serveChildGRPC serves srv with grpc-go's server on addr, "unix:PATH"
// or "unix:@NAME".
func serveChildGRPC(addr string, srv servers) (func(), error) {
	path, ok := strings.CutPrefix(addr, "unix:")
	if !ok {
		return nil, fmt.Errorf("%s: grpc serves unix: addresses, not %q", childEnv, addr)
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer()
	srv.registerOn(s)
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.Serve(lis)
	}()
	return func() { s.Stop(); <-served }, nil
}
