package bookstore_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
)

// A transport is a client connection to the services registered by the
// test, through one kind of channel or socket.
type transport struct {
	name string
	conn grpc.ClientConnInterface
}

// An inprocMode is a way to make an in-process channel.
type inprocMode struct {
	name string
	opts []inproc.Option
}

var (
	// everyInprocMode is the four modes of inproc.
	everyInprocMode = []inprocMode{
		{"inproc-clone-isolated", []inproc.Option{inproc.WithCopy(inproc.Clone), inproc.WithExecution(inproc.Isolated)}},
		{"inproc-clone-inline", []inproc.Option{inproc.WithCopy(inproc.Clone), inproc.WithExecution(inproc.Inline)}},
		{"inproc-share-isolated", []inproc.Option{inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Isolated)}},
		{"inproc-share-inline", []inproc.Option{inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Inline)}},
	}
	// benchInprocModes is the two copy modes, with handlers on their own
	// goroutines as on a socket.
	benchInprocModes = []inprocMode{
		{"inproc-share", []inproc.Option{inproc.WithCopy(inproc.Share)}},
		{"inproc-clone", []inproc.Option{inproc.WithCopy(inproc.Clone)}},
	}
)

// transports registers services, with register, on an in-process channel
// of each of modes and on a localgrpc.Server listening on a unix socket,
// an abstract socket and TCP, and returns a client of each. All of them
// stop when tb ends.
func transports(tb testing.TB, modes []inprocMode, register func(grpc.ServiceRegistrar)) []transport {
	tb.Helper()
	var ts []transport
	for _, m := range modes {
		ch := inproc.New(m.opts...)
		register(ch)
		tb.Cleanup(ch.Stop)
		ts = append(ts, transport{m.name, ch})
	}
	srv := localgrpc.NewServer()
	register(srv)
	// The directory is short, not tb.TempDir(), whose path holds the
	// test's name and could pass a socket path's 108 bytes.
	dir, err := os.MkdirTemp("", "bookstore")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	abstract := fmt.Sprintf("bookstore-test-%d-%08x", os.Getpid(), rand.Uint32())
	servertest.Serve(tb, srv, "unix:"+filepath.Join(dir, "s.sock"), "unix-abstract:"+abstract, "127.0.0.1:0")
	for _, addr := range srv.Addrs() {
		a, err := localgrpc.ParseAddress(addr)
		if err != nil {
			tb.Fatal(err)
		}
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { cc.Close() })
		ts = append(ts, transport{a.Kind.String(), cc})
	}
	return ts
}
