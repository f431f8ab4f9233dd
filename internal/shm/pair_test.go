package shm_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"github.com/localgrpc/localgrpc/internal/shm"
	"google.golang.org/grpc"
)

// socketPair is two connected unix stream sockets.
func socketPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int, name string) net.Conn {
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return conn(fds[0], "client"), conn(fds[1], "server")
}

// pair is a client's connection to a server's channel, across a socket
// pair: both sides of the transport, bound as the root package binds
// them.
func pair(t testing.TB, register func(grpc.ServiceRegistrar)) grpc.ClientConnInterface {
	t.Helper()
	cnc, snc := socketPair(t)
	server := inproc.New()
	register(server)
	bind := func(closed context.Context) grpc.ClientConnInterface {
		return inprocconn.Bind(server, inprocconn.Conn{Encode: true, InlineUnary: true, Closed: closed})
	}
	type served struct {
		sc  *shm.ServerConn
		err error
	}
	sch := make(chan served, 1)
	go func() {
		sc, err := shm.Serve(snc, bind, 4<<20, nil)
		sch <- served{sc, err}
	}()
	cl, err := shm.NewClient(cnc)
	if err != nil {
		t.Fatal(err)
	}
	s := <-sch
	if s.err != nil {
		t.Fatal(s.err)
	}
	client := inproc.New()
	inprocconn.Forward(client, cl.Unary, cl.Stream)
	t.Cleanup(func() {
		cl.Close()
		s.sc.Close()
		server.Stop()
		client.Stop()
	})
	return inprocconn.Bind(client, inprocconn.Conn{Encode: true, InlineUnary: true})
}

func TestEchoCalls(t *testing.T) {
	cc := pair(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) })
	c := echov1.NewEchoClient(cc)
	for _, call := range servertest.EchoCalls {
		t.Run(call.Name, func(t *testing.T) {
			got, err := call.Call(servertest.TimeoutCtx(t), c)
			if err != nil || !slices.Equal(got, call.Want) {
				t.Fatalf("got %q, %v; want %q", got, err, call.Want)
			}
		})
	}
}

// TestConcurrentCalls makes calls of every kind from many goroutines on
// one connection: streams open in whatever order their goroutines run,
// and none may break the connection.
func TestConcurrentCalls(t *testing.T) {
	cc := pair(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) })
	c := echov1.NewEchoClient(cc)
	ctx := servertest.TimeoutCtx(t)
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 100 {
				call := servertest.EchoCalls[(g+i)%len(servertest.EchoCalls)]
				got, err := call.Call(ctx, c)
				if err == nil && !slices.Equal(got, call.Want) {
					err = fmt.Errorf("%s: got %q, want %q", call.Name, got, call.Want)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
