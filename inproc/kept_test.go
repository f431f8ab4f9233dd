package inproc_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/localgrpc/localgrpc/internal/inprocconn"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestKeptAfterConnectionClose: a handler sends n messages to a client
// that read one and then stops, so that a window of them is queued and
// the handler waits for room; then the client's connection closes. As
// over grpc-go, where the transport puts its error behind what the
// stream's buffer holds, the client still receives what was queued
// before the close, intact, once each, in order, and then the
// connection's error; the handler's wait ends (a Send it is blocked in
// fails, Unavailable, as a closed connection's does). With Clone the queued
// copies come through the stream's Spare, past its ring for the longer
// streams.
func TestKeptAfterConnectionClose(t *testing.T) {
	closeErr := status.Error(codes.Canceled, "the test closed the connection")
	forEachMode(t, func(t *testing.T, mode testMode) {
		share := isShare(t, mode)
		for _, n := range []int{2, 65, 200} {
			t.Run("n="+strconv.Itoa(n), func(t *testing.T) {
				var sent atomic.Int64
				handlerErr := make(chan error, 1)
				ch := newChannel(t, mode)
				ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
					err := func() error {
						out := &flat3.Flat{}
						for i := range n {
							out = guardedMsg(share, out, 0, i, 1+i%40)
							if err := ss.SendMsg(out); err != nil {
								return err
							}
							sent.Add(1)
						}
						<-ss.Context().Done()
						return nil
					}()
					handlerErr <- err
					return err
				}})
				closed, closeConn := context.WithCancelCause(context.Background())
				defer closeConn(nil)
				cc := inprocconn.Bind(ch, inprocconn.Conn{Closed: closed})
				s, err := cc.NewStream(timeoutCtx(t), anyBidiDesc, anyBidi)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
				got := &inOrder{}
				size := func(_, i int) int { return 1 + i%40 }
				in := &flat3.Flat{}
				if err := s.RecvMsg(in); err != nil {
					t.Fatal(err)
				}
				if err := got.see(in, size, true); err != nil {
					t.Fatal(err)
				}
				settle() // an Isolated handler fills the window
				closeConn(closeErr)
				var recvErr error
				for {
					in := &flat3.Flat{}
					if recvErr = s.RecvMsg(in); recvErr != nil {
						break
					}
					if err := got.see(in, size, true); err != nil {
						t.Fatal(err)
					}
				}
				if errors.Is(recvErr, io.EOF) {
					t.Fatalf("after %d messages: io.EOF, want the connection's error", got.n)
				}
				wantCode(t, "RecvMsg after the kept messages", recvErr, codes.Canceled)
				if s := int(sent.Load()); got.n > s+1 || got.n < 1 {
					t.Errorf("received %d messages, the handler sent %d", got.n, s)
				}
				if err := receive(t, handlerErr, "the handler to end"); err != nil && !isCode(err, codes.Canceled, codes.Unavailable) {
					t.Errorf("the handler: %v", err)
				}
			})
		}
	})
}
