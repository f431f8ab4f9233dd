package localgrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestClientBeforeServer checks, side by side with an abstract socket,
// that a client of an address nothing serves yet is made at once, that
// its calls fail with Unavailable, or wait for a server with
// grpc.WaitForReady until their deadline, and that a call waiting when a
// server starts to serve the address goes through.
func TestClientBeforeServer(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + servertest.UniqueName()
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Fatalf("NewClient(%q) before any server: %v, want a client that connects when needed", addr, err)
			}
			t.Cleanup(func() { cc.Close() })
			c := echov1.NewEchoClient(cc)

			_, err = c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
			if status.Code(err) != codes.Unavailable {
				t.Errorf("a call with nothing serving %s: %v, want Unavailable", addr, err)
			}
			short, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			_, err = c.Get(short, &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
			if status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("a call that waits for ready with nothing serving %s: %v, want DeadlineExceeded", addr, err)
			}

			waiting := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
				waiting <- err
			}()
			time.Sleep(20 * time.Millisecond) // let it wait: it must go through whenever the server comes
			servertest.Serve(t, servertest.NewEchoServer(), addr)
			select {
			case err := <-waiting:
				if err != nil {
					t.Errorf("a call waiting for ready when a server came to %s: %v", addr, err)
				}
			case <-time.After(waitLimit):
				t.Fatalf("a call waiting for ready did not reach the server that came to %s", addr)
			}
			if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
				t.Errorf("a call once %s is served: %v", addr, err)
			}
		})
	}
}
