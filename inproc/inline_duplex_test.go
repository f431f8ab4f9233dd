package inproc_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
)

// duplexHandler is a bidi handler that is full duplex on the server's
// side too: it receives on its own goroutine and sends from another, as
// gRPC allows (one sender and one receiver at a time).
var duplexHandler = &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	sent := make(chan error, 1)
	go func() {
		for i := range 50 {
			if err := s.Send(&echov1.EchoResponse{Text: strconv.Itoa(i)}); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	return <-sent
}}

func runDuplex(t *testing.T, c echov1.EchoClient) error {
	s, err := c.Update(timeoutCtx(t))
	if err != nil {
		return err
	}
	sent := async(func() error {
		for range 50 {
			if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
				return err
			}
		}
		return s.CloseSend()
	})
	for i := 0; ; i++ {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if r.GetText() != strconv.Itoa(i) {
			return errors.New("out of order: " + r.GetText())
		}
	}
	return receive(t, sent, "the client's sends")
}

// TestInlineHandlerSendsFromGoroutine: an Inline stream handler that
// sends from a goroutine it started (while it receives on its own) calls
// handed, and so the coroutine's yield, from a goroutine that is not the
// coroutine: iter.Pull panics ("yield called again before next") on that
// goroutine, which kills the process. Over grpc-go (and Isolated) the call
// works. The cases run in a child process so the crash is reported.
func TestInlineHandlerSendsFromGoroutine(t *testing.T) {
	if os.Getenv("INPROC_INLINE_DUPLEX_CHILD") != "" {
		forEachMode(t, func(t *testing.T, m testMode) {
			if m.name != os.Getenv("INPROC_INLINE_DUPLEX_CHILD") {
				t.Skip()
			}
			c, _ := newEcho(t, m, duplexHandler)
			for range 20 {
				if err := runDuplex(t, c); err != nil {
					t.Fatal(err)
				}
			}
		})
		return
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, duplexHandler) }, nil, nil))
	if err := runDuplex(t, ref); err != nil {
		t.Fatalf("reference: grpc-go: %v", err)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInlineHandlerSendsFromGoroutine$", "-test.count=1")
		cmd.Env = append(os.Environ(), "INPROC_INLINE_DUPLEX_CHILD="+m.name)
		out, err := cmd.CombinedOutput()
		if err != nil {
			lines := crashLines(out)
			t.Errorf("grpc-go: OK; inproc (child %v):\n%s", err, lines)
		}
	})
}
