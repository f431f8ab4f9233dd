//go:build linux

package shm_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"github.com/localgrpc/localgrpc/internal/shm"
	"github.com/localgrpc/localgrpc/internal/shmwire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// TestLargeMessagesWhole sends messages of the sizes where a message
// changes how it crosses (the pool's threshold, a ring record's frame,
// several frames, several records) both ways, unary and on a stream:
// each arrives whole.
func TestLargeMessagesWhole(t *testing.T) {
	cc := pair(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) })
	c := echov1.NewEchoClient(cc)
	ctx := servertest.TimeoutCtx(t)
	const frame = 1<<18 - 8<<10 // a ring's largest Message frame
	stream, err := c.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 1023, 1024, 64 << 10, frame - 1, frame, frame + 1, 1 << 20, 3<<20 + 7} {
		text := patterned(n)
		resp, err := c.Get(ctx, &echov1.EchoRequest{Text: text}, grpc.MaxCallRecvMsgSize(8<<20))
		if err != nil || resp.GetText() != text {
			t.Fatalf("Get of %d bytes: %d bytes back, %v", n, len(resp.GetText()), err)
		}
		if err := stream.Send(&echov1.EchoRequest{Text: text}); err != nil {
			t.Fatalf("Send of %d bytes: %v", n, err)
		}
		got, err := stream.Recv()
		if err != nil || got.GetText() != text {
			t.Fatalf("stream of %d bytes: %d bytes back, %v", n, len(got.GetText()), err)
		}
	}
}

// patterned is n bytes that differ from any shift of themselves, so that a
// piece out of place shows.
func patterned(n int) string {
	var b strings.Builder
	b.Grow(n)
	for i := 0; b.Len() < n; i++ {
		b.WriteByte('a' + byte(i%23))
		if i%1000 == 0 {
			b.WriteByte('A' + byte(i/1000%26))
		}
	}
	return b.String()[:n]
}

// rawClient is a client that spoke the hello, offering Sized frames but
// no rings, to a server's side whose limit is maxRecv; it returns the
// socket, a reader of the server's frames, and the server's side.
func rawClient(t *testing.T, maxRecv int) (net.Conn, *shmwire.Reader, *shm.ServerConn) {
	t.Helper()
	cnc, snc := socketPair(t)
	server := inproc.New()
	echov1.RegisterEchoServer(server, echo.Server{})
	sch := serve(snc, server, maxRecv)
	if err := shmwire.WriteHello(cnc, shmwire.Hello{Version: 1, Features: shmwire.FeatureSized, MaxFrame: 1 << 20, Window: 1 << 20, ConnWin: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := shmwire.ReadHello(cnc); err != nil {
		t.Fatal(err)
	}
	s := <-sch
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() {
		cnc.Close()
		s.sc.Close()
		server.Stop()
	})
	return cnc, shmwire.NewReader(cnc, 1<<20), s.sc
}

// callStatus reads the server's frames until the Trailers of stream id,
// and returns their code.
func callStatus(t *testing.T, nc net.Conn, r *shmwire.Reader, id uint32) codes.Code {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		h, p, _, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("no trailers for stream %d: %v", id, err)
		}
		if h.Type == shmwire.Trailers && h.Stream == id {
			st, err := shmwire.ParseStatus(p)
			if err != nil {
				t.Fatal(err)
			}
			return codes.Code(st.Code)
		}
	}
}

func getHeaders(id uint32) []byte {
	return shmwire.AppendFrame(nil, id, shmwire.Headers, 0, (&shmwire.Request{Method: "/echo.v1.Echo/Get", Unary: true}).Append(nil))
}

// TestSizedOverTheLimitRefusedAtOnce has a client size a request over the
// server's limit and send only its first bytes: the server refuses it
// with ResourceExhausted without waiting for the rest, as grpc-go's
// refuses a message whose length prefix is over its limit.
func TestSizedOverTheLimitRefusedAtOnce(t *testing.T) {
	nc, r, _ := rawClient(t, 1<<20)
	b := getHeaders(1)
	b = shmwire.AppendFrame(b, 1, shmwire.Message, shmwire.More|shmwire.Sized, append(shmwire.AppendSize(nil, 64<<20), "first bytes"...))
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
	if got := callStatus(t, nc, r, 1); got != codes.ResourceExhausted {
		t.Fatalf("a request sized over the limit ended with %v, want ResourceExhausted", got)
	}
}

// TestSizedBrokenRefused has a client send messages whose frames do not
// add up to the size it gave: the call fails with Internal, and the
// connection serves the next call.
func TestSizedBrokenRefused(t *testing.T) {
	nc, r, _ := rawClient(t, 1<<20)
	sized := func(id uint32, size uint32, first string) []byte {
		return shmwire.AppendFrame(nil, id, shmwire.Message, shmwire.More|shmwire.Sized, append(shmwire.AppendSize(nil, size), first...))
	}
	last := func(id uint32, rest string) []byte {
		b := shmwire.AppendFrame(nil, id, shmwire.Message, 0, []byte(rest))
		return shmwire.AppendFrame(b, id, shmwire.Message, shmwire.End, nil)
	}
	req := []byte{10, 6, 'a', 'b', 'c', 'd', 'e', 'f'} // EchoRequest{Text: "abcdef"}
	id := uint32(1)
	for name, frames := range map[string]func(id uint32) []byte{
		"size within the first frame": func(id uint32) []byte { return append(sized(id, 4, string(req[:4])), last(id, string(req[4:]))...) },
		"fewer bytes than sized":      func(id uint32) []byte { return append(sized(id, 9, string(req[:4])), last(id, string(req[4:]))...) },
		"more bytes than sized":       func(id uint32) []byte { return append(sized(id, 7, string(req[:4])), last(id, string(req[4:]))...) },
		"sized inside a message": func(id uint32) []byte {
			b := shmwire.AppendFrame(nil, id, shmwire.Message, shmwire.More, req[:2])
			return append(append(b, sized(id, 6, string(req[2:4]))...), last(id, string(req[4:]))...)
		},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := nc.Write(append(getHeaders(id), frames(id)...)); err != nil {
				t.Fatal(err)
			}
			if got := callStatus(t, nc, r, id); got != codes.Internal {
				t.Fatalf("ended with %v, want Internal", got)
			}
			id += 2
		})
	}
	// A well-sized request on the same connection is served.
	b := append(getHeaders(id), sized(id, uint32(len(req)), string(req[:3]))...)
	b = append(b, last(id, string(req[3:]))...)
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
	if got := callStatus(t, nc, r, id); got != codes.OK {
		t.Fatalf("a well-sized request ended with %v", got)
	}
}
