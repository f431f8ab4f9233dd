//go:build linux

package shm_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/shm"
	"github.com/localgrpc/localgrpc/internal/shmwire"
	"google.golang.org/grpc/metadata"
)

// seedFrames is a whole call of each kind, as a client writes them.
func seedFrames() []byte {
	var b []byte
	b = shmwire.AppendFrame(b, 1, shmwire.Headers, 0, (&shmwire.Request{Method: "/echo.v1.Echo/Get", Unary: true}).Append(nil))
	b = shmwire.AppendFrame(b, 1, shmwire.Message, 0, []byte{10, 2, 'h', 'i'})
	b = shmwire.AppendFrame(b, 1, shmwire.Message, shmwire.End, nil)
	b = shmwire.AppendFrame(b, 3, shmwire.Headers, 0, (&shmwire.Request{Method: "/echo.v1.Echo/Update", MD: metadata.Pairs("k", "v")}).Append(nil))
	b = shmwire.AppendFrame(b, 3, shmwire.Message, shmwire.More, []byte{10, 2})
	b = shmwire.AppendFrame(b, 3, shmwire.Message, 0, []byte{'h', 'i'})
	b = shmwire.AppendFrame(b, 3, shmwire.Window, 0, shmwire.AppendWindow(nil, 100))
	b = shmwire.AppendFrame(b, 3, shmwire.Cancel, 0, shmwire.AppendCode(nil, 1))
	b = shmwire.AppendFrame(b, 5, shmwire.Headers, 0, (&shmwire.Request{Method: "/echo.v1.Echo/Get", Unary: true}).Append(nil))
	b = shmwire.AppendFrame(b, 5, shmwire.Message, shmwire.More|shmwire.Sized, append(shmwire.AppendSize(nil, 4), 10, 2))
	b = shmwire.AppendFrame(b, 5, shmwire.Message, 0, []byte{'h', 'i'})
	b = shmwire.AppendFrame(b, 5, shmwire.Message, shmwire.End, nil)
	return b
}

// FuzzServerConn has a client that spoke a valid hello write anything:
// the server's side never panics or hangs, and ends once the client's
// side closes.
func FuzzServerConn(f *testing.F) {
	f.Add(seedFrames())
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 2, 1, 0})
	server := inproc.New()
	echov1.RegisterEchoServer(server, echo.Server{})
	f.Fuzz(func(t *testing.T, b []byte) {
		cnc, snc := socketPair(t)
		defer cnc.Close()
		sch := serve(snc, server, 1<<20)
		if err := shmwire.WriteHello(cnc, shmwire.Hello{Version: 1, Features: shmwire.FeatureSized, MaxFrame: 1 << 20, Window: 1 << 20, ConnWin: 1 << 20}); err != nil {
			t.Fatal(err)
		}
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, cnc)
			close(drained)
		}()
		cnc.Write(b)
		cnc.(*net.UnixConn).CloseWrite()
		s := <-sch
		if s.err != nil {
			t.Fatal(s.err)
		}
		select {
		case <-s.sc.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the server's side did not end after the client closed")
		}
		s.sc.Close()
		<-drained
	})
}

// FuzzClient has a server that spoke a valid hello write anything while
// a call is in flight: the client's side never panics or hangs, the call
// ends, and the connection ends once the server's side closes.
func FuzzClient(f *testing.F) {
	var seed []byte
	seed = shmwire.AppendFrame(seed, 1, shmwire.Headers, 0, shmwire.AppendMD(nil, metadata.Pairs("h", "1")))
	seed = shmwire.AppendFrame(seed, 1, shmwire.Message, 0, []byte{10, 2, 'h', 'i'})
	seed = shmwire.AppendFrame(seed, 1, shmwire.Trailers, 0, (&shmwire.Status{Code: 0}).Append(nil))
	f.Add(seed)
	f.Add(shmwire.AppendFrame(nil, 1, shmwire.Trailers, 0, (&shmwire.Status{Code: 3, Details: []byte{8, 4}}).Append(nil)))
	seed = shmwire.AppendFrame(nil, 1, shmwire.Message, shmwire.More|shmwire.Sized, append(shmwire.AppendSize(nil, 4), 10, 2))
	seed = shmwire.AppendFrame(seed, 1, shmwire.Message, 0, []byte{'h', 'i'})
	f.Add(append(seed, shmwire.AppendFrame(nil, 1, shmwire.Trailers, 0, (&shmwire.Status{Code: 0}).Append(nil))...))
	f.Fuzz(func(t *testing.T, b []byte) {
		cnc, snc := socketPair(t)
		go func() {
			shmwire.ReadHello(snc)
			shmwire.WriteHello(snc, shmwire.Hello{Version: 1, MaxFrame: 1 << 20, Window: 1 << 20, ConnWin: 1 << 20})
			snc.Write(b)
			snc.Close()
		}()
		cl, err := shm.NewClient(cnc, shm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		_, cc := forwarding(cl)
		c := echov1.NewEchoClient(cc)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Get(ctx, &echov1.EchoRequest{Text: "x"})
		if ctx.Err() != nil {
			t.Fatal("the call did not end before its deadline")
		}
		select {
		case <-cl.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the client's side did not end after the server closed")
		}
	})
}
