package localgrpc_test

import (
	"context"
	"testing"
	"time"
	_ "unsafe" // go:linkname, to register a global server option as csm.EnableObservability does

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestWaitForReadyPassesOverServerThatNeverServed: a call that
// waits for ready follows the first Server that claims its name; if that
// one stops before it serves, the call fails Unavailable ("the server
// stopped before it served") instead of waiting on, as NewClient's doc
// says a waiting call does until its context ends, and as a socket client
// does: the next Server of the name, which comes at once, never gets it.
func TestWaitForReadyPassesOverServerThatNeverServed(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + uniqueName(t)
			c := dial(t, addr)
			waiting := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
				waiting <- err
			}()
			time.Sleep(50 * time.Millisecond) // the call waits for a server

			first := newEchoServer()
			if err := first.Listen(addr); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the call found it, waits for Serve
			first.Stop()

			serve(t, newEchoServer(), addr)
			select {
			case err := <-waiting:
				if err != nil {
					t.Errorf("a call waiting for ready on %s, when a server listened then stopped without serving and another then served: %v, want it served by the second", addr, err)
				}
			case <-time.After(waitLimit):
				t.Fatal("the waiting call never returned")
			}
		})
	}
}

// TestCloseEndsWaitingInprocCall: Close leaves a unary call
// that waits for ready waiting (until its context ends: a leak with no
// deadline), and the call then goes through on the closed connection once
// a server comes. A closed grpc.ClientConn ends such a call at once with
// Canceled.
func TestCloseEndsWaitingInprocCall(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + uniqueName(t)
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Fatal(err)
			}
			c := echov1.NewEchoClient(cc)
			waiting := make(chan error, 1)
			go func() {
				_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true))
				waiting <- err
			}()
			time.Sleep(50 * time.Millisecond)
			cc.Close()
			select {
			case err := <-waiting:
				if status.Code(err) != codes.Canceled {
					t.Errorf("a waiting call ended by Close: %v, want Canceled", err)
				}
				return
			case <-time.After(time.Second):
			}
			serve(t, newEchoServer(), addr)
			select {
			case err := <-waiting:
				t.Errorf("Close of the client of %s did not end a call waiting for ready (1s later it still waited); once a server came it returned %v, on a closed connection", addr, err)
			case <-time.After(waitLimit):
				t.Errorf("Close of the client of %s did not end a call waiting for ready", addr)
			}
		})
	}
}

// TestInprocClientMovesToSuccessorOfDrainingServer: a client keeps sending
// its calls to the Server it last reached while that one drains
// (GracefulStop waiting for a stream), though the drain released the name
// and another Server now serves it: every call fails Unavailable while a
// new client of the same name, or a socket client (which reconnects on
// GOAWAY), reaches the new Server.
func TestInprocClientMovesToSuccessorOfDrainingServer(t *testing.T) {
	for _, scheme := range []string{"unix:@", "inproc:"} {
		t.Run("addr="+scheme, func(t *testing.T) {
			addr := scheme + uniqueName(t)
			old := newEchoServer()
			if err := old.Listen(addr); err != nil {
				t.Fatal(err)
			}
			oldDone := make(chan error, 1)
			go func() { oldDone <- old.Serve(context.Background()) }()
			t.Cleanup(func() { old.Stop(); <-oldDone })

			c := dial(t, addr)
			if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
				t.Fatal(err)
			}
			// A stream held open keeps the old server draining.
			holder := dial(t, addr)
			sctx, scancel := context.WithCancel(t.Context())
			defer scancel()
			st, err := holder.Update(sctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Send(&echov1.EchoRequest{Text: "p"}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Recv(); err != nil {
				t.Fatal(err)
			}
			go old.GracefulStop()
			deadline := time.Now().Add(waitLimit)
			var next *localgrpc.Server
			for {
				next = newEchoServer()
				if err := next.Listen(addr); err == nil {
					break
				}
				next.Stop()
				if time.Now().After(deadline) {
					t.Fatal("the name was never released")
				}
				time.Sleep(10 * time.Millisecond)
			}
			serve(t, next)

			// A fresh client reaches the new server.
			if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}); err != nil {
				t.Fatalf("a new client of %s: %v", addr, err)
			}
			var err2 error
			for range 3 {
				if _, err2 = c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, grpc.WaitForReady(true)); err2 == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err2 != nil {
				t.Errorf("the old client of %s, while its server drains and another serves the name: %v (3 tries, waiting for ready), want the new server's answer", addr, err2)
			}
		})
	}
}
