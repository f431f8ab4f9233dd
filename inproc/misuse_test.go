package inproc_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// misuseSends is how many messages each of two goroutines sends on one
// stream: many windows, so that one of them waits inside SendMsg while the
// other calls it.
const misuseSends = 2000

// TestConcurrentSendFailsStream sends on one stream from two goroutines at
// once, which gRPC forbids, from the client and from the handler, and
// receives from two goroutines at once. Over grpc-go the mistake stalls the
// stream until it is cancelled; here it must fail the stream with Internal
// (a Send or Recv says so), never corrupt what is delivered, never spin,
// and end when the client cancels, leaving no goroutine behind.
func TestConcurrentSendFailsStream(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		t.Run("side=client/op=send", func(t *testing.T) {
			handlerErr := make(chan error, 1)
			c, ch := newEcho(t, m, &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				err := drainInOrder(s)
				handlerErr <- err
				return err
			}}, inproc.WithWindow(4))
			ctx, cancel := context.WithCancel(timeoutCtx(t))
			s, err := c.Update(ctx)
			if err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 2)
			var wg sync.WaitGroup
			for g := range 2 {
				wg.Go(func() {
					for i := range misuseSends {
						if err := s.Send(&echov1.EchoRequest{Text: strconv.Itoa(g) + ":" + strconv.Itoa(i)}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			sawInternal := false
			for err := range errs {
				if status.Code(err) == codes.Internal {
					sawInternal = true
				} else if !errors.Is(err, io.EOF) {
					t.Errorf("a concurrent Send: %v, want Internal or io.EOF", err)
				}
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			_, recvErr := s.Recv()
			if !sawInternal {
				// The two goroutines never overlapped: the stream must be
				// healthy then.
				t.Logf("the two senders did not overlap")
				if !errors.Is(recvErr, io.EOF) {
					t.Errorf("Recv after two Send loops that did not overlap: %v, want io.EOF", recvErr)
				}
			} else {
				wantCode(t, "Recv after concurrent Sends", recvErr, codes.Internal)
			}
			cancel()
			// The call ends, and its handler with it (an Inline handler
			// may not have run at all).
			receive(t, async(func() error { ch.GracefulStop(); return nil }), "every call to end")
			select {
			case err := <-handlerErr:
				if err != nil && !isCode(err, codes.Canceled, codes.Internal) {
					t.Errorf("the handler saw %v", err)
				}
			default:
			}
		})
		t.Run("side=server/op=send", func(t *testing.T) {
			if !isIsolated(t, m) {
				t.Skip("an Inline handler is a coroutine of its client: its other goroutines cannot use the stream")
			}
			handlerErrs := make(chan error, 2)
			c, _ := newEcho(t, m, &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				var wg sync.WaitGroup
				for g := range 2 {
					wg.Go(func() {
						for i := range misuseSends {
							if err := s.Send(&echov1.EchoResponse{Text: strconv.Itoa(g) + ":" + strconv.Itoa(i)}); err != nil {
								handlerErrs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				return nil
			}}, inproc.WithWindow(4))
			ctx, cancel := context.WithCancel(timeoutCtx(t))
			s, err := c.Expand(ctx, &echov1.EchoRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var recvErr error
			last := map[string]int{"0": -1, "1": -1}
			for {
				r, err := s.Recv()
				if err != nil {
					recvErr = err
					break
				}
				g, i, ok := cutNumber(r.GetText())
				if !ok || i <= last[g] {
					t.Fatalf("received %q after %d from sender %s: a corrupted queue", r.GetText(), last[g], g)
				}
				last[g] = i
			}
			cancel()
			if errors.Is(recvErr, io.EOF) {
				t.Logf("the two senders did not overlap")
				return
			}
			wantCode(t, "Recv after the handler's concurrent Sends", recvErr, codes.Internal)
			if err := receive(t, handlerErrs, "a Send to fail"); !isCode(err, codes.Internal, codes.Canceled) {
				t.Errorf("a concurrent Send of the handler: %v, want Internal or Canceled", err)
			}
		})
		t.Run("side=client/op=recv", func(t *testing.T) {
			c, _ := newEcho(t, m, &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				for i := range misuseSends {
					if err := s.Send(&echov1.EchoResponse{Text: "0:" + strconv.Itoa(i)}); err != nil {
						return err
					}
				}
				return nil
			}}, inproc.WithWindow(4))
			ctx, cancel := context.WithCancel(timeoutCtx(t))
			defer cancel()
			s, err := c.Expand(ctx, &echov1.EchoRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			seen := map[int]bool{}
			errs := make(chan error, 2)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					for {
						r, err := s.Recv()
						if err != nil {
							errs <- err
							return
						}
						_, i, ok := cutNumber(r.GetText())
						mu.Lock()
						dup := seen[i]
						seen[i] = true
						mu.Unlock()
						if !ok || dup {
							errs <- errors.New("received " + r.GetText() + " twice: a corrupted queue")
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if !errors.Is(err, io.EOF) && status.Code(err) != codes.Internal {
					t.Errorf("a concurrent Recv: %v, want io.EOF or Internal", err)
				}
			}
		})
	})
}

// drainInOrder receives until the end, checking that each sender's
// messages ("G:I") come in order.
func drainInOrder(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	last := map[string]int{}
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		g, i, ok := cutNumber(r.GetText())
		if prev, seen := last[g]; !ok || seen && i <= prev {
			return status.Errorf(codes.DataLoss, "received %q after %d: a corrupted queue", r.GetText(), prev)
		}
		last[g] = i
	}
}

// cutNumber splits "G:I" into G and the number I.
func cutNumber(text string) (string, int, bool) {
	for j := range len(text) {
		if text[j] == ':' {
			i, err := strconv.Atoi(text[j+1:])
			return text[:j], i, err == nil
		}
	}
	return "", 0, false
}

// isCode reports whether err has one of the codes.
func isCode(err error, want ...codes.Code) bool {
	got := status.Code(err)
	for _, w := range want {
		if got == w {
			return true
		}
	}
	return false
}
