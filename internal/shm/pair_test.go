//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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
func pair(t testing.TB, register func(grpc.ServiceRegistrar), serverOpts ...inproc.Option) grpc.ClientConnInterface {
	t.Helper()
	cnc, snc := socketPair(t)
	server := inproc.New(serverOpts...)
	register(server)
	sch := serve(snc, server, 64<<20)
	cl, err := shm.NewClient(cnc, shm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := <-sch
	if s.err != nil {
		t.Fatal(s.err)
	}
	client, cc := forwarding(cl)
	t.Cleanup(func() {
		cl.Close()
		s.sc.Close()
		server.Stop()
		client.Stop()
	})
	return cc
}

// served is what Serve returned.
type served struct {
	sc  *shm.ServerConn
	err error
}

// serve has snc's client served through server's channel, bound as the
// root package binds it, on a goroutine of its own: the hello waits for
// the client's side.
func serve(snc net.Conn, server *inproc.Channel, maxRecv int) <-chan served {
	bind := func(closed context.Context) grpc.ClientConnInterface {
		return inprocconn.Bind(server, inprocconn.Conn{Encode: true, InlineUnary: true, Closed: closed})
	}
	sch := make(chan served, 1)
	go func() {
		sc, err := shm.Serve(snc, bind, maxRecv, nil, shm.Options{})
		sch <- served{sc, err}
	}()
	return sch
}

// forwarding is a channel that forwards every call to cl, and its client
// side bound as the root package binds it.
func forwarding(cl *shm.Client) (*inproc.Channel, grpc.ClientConnInterface) {
	client := inproc.New(inproc.WithServerMaxRecvMsgSize(math.MaxInt32), inproc.WithServerMaxSendMsgSize(math.MaxInt32))
	inprocconn.Forward(client, cl.Unary, cl.Stream, cl.Open)
	return client, inprocconn.Bind(client, inprocconn.Conn{Encode: true, InlineUnary: true})
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

// TestStalledStreamStarvesNoOther leaves a server stream of many large
// messages unread: its window fills and its handler waits, while a unary
// call and another stream on the same connection go on.
func TestStalledStreamStarvesNoOther(t *testing.T) {
	var sent atomic.Int64
	cc := pair(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, countingEcho{sent: &sent}) }, inproc.WithServerMaxRecvMsgSize(64<<20))
	c := echov1.NewEchoClient(cc)
	ctx := servertest.TimeoutCtx(t)
	word := strings.Repeat("w", 16<<10)
	const n = 800 // 12.5 MiB, well over the stream window
	stalled, err := c.Expand(ctx, &echov1.EchoRequest{Text: strings.Repeat(word+" ", n)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stalled.Recv(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server fills what the stream lets it
	if sent := sent.Load(); sent >= n {
		t.Errorf("the server sent all %d messages to a client that read one: nothing held it back", sent)
	}
	for i := range 20 {
		if r, err := c.Get(ctx, &echov1.EchoRequest{Text: "through"}); err != nil || r.GetText() != "through" {
			t.Fatalf("unary call %d beside a stalled stream: %v, %v", i, r, err)
		}
	}
	texts, err := servertest.EchoCalls[3].Call(ctx, c)
	if err != nil || !slices.Equal(texts, servertest.EchoCalls[3].Want) {
		t.Fatalf("a bidi stream beside a stalled stream: %q, %v", texts, err)
	}
	got := 1
	for {
		r, err := stalled.Recv()
		if err == io.EOF {
			break
		}
		if err != nil || r.GetText() != word {
			t.Fatalf("the stalled stream's message %d: %d bytes, %v", got, len(r.GetText()), err)
		}
		got++
	}
	if got != n {
		t.Fatalf("the stalled stream delivered %d messages, want %d", got, n)
	}
}

// countingEcho is Echo whose Expand counts the messages it sent.
type countingEcho struct {
	echo.Server
	sent *atomic.Int64
}

func (e countingEcho) Expand(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
	return echo.Expand(req, func(r *echov1.EchoResponse) error {
		err := s.Send(r)
		e.sent.Add(1)
		return err
	})
}
