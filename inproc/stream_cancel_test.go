package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"sync"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStreamCancelWhileYielding cancels bidi streams at random
// points of a ping-pong whose sides yield before they park, with
// GOMAXPROCS 1 and 2. Over a socket the client's Send gives nil or
// io.EOF, its Recv the echo of what it sent in order, then Canceled; the
// handler's Send, once its context ended, fails with a status error; the
// client returns promptly; every handler returns.
func TestStreamCancelWhileYielding(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("Inline cancellation is cooperative by design")
		}
		withProcs(t, func(t *testing.T) {
			var handlers sync.WaitGroup
			handlerErrs := make(chan error, 100)
			c, _ := newEcho(t, m, &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				handlers.Add(1)
				defer handlers.Done()
				for {
					in, err := s.Recv()
					if err != nil {
						return err
					}
					if err := s.Send(&echov1.EchoResponse{Text: in.Text}); err != nil {
						if _, ok := status.FromError(err); !ok || s.Context().Err() == nil {
							handlerErrs <- fmt.Errorf("handler Send: %v with context %v", err, s.Context().Err())
						}
						return err
					}
				}
			}})
			r := rand.New(rand.NewSource(5))
			for i := range 150 {
				ctx, cancel := context.WithCancel(t.Context())
				stopAt := r.Intn(20)
				s, err := c.Update(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var failed error
				for j := 0; ; j++ {
					if j == stopAt {
						cancel()
					}
					text := fmt.Sprint(j)
					if err := s.Send(&echov1.EchoRequest{Text: text}); err != nil && !errors.Is(err, io.EOF) {
						failed = fmt.Errorf("Send %d: %v", j, err)
						break
					}
					resp, err := s.Recv()
					if err != nil {
						if status.Code(err) != codes.Canceled || j < stopAt {
							failed = fmt.Errorf("Recv %d (cancel at %d): %v", j, stopAt, err)
						}
						break
					}
					if resp.Text != text {
						failed = fmt.Errorf("Recv %d: %q", j, resp.Text)
						break
					}
					if j > stopAt+1000 {
						failed = fmt.Errorf("stream still echoing %d messages after cancel", j-stopAt)
						break
					}
				}
				cancel()
				if failed != nil {
					t.Fatalf("stream %d: %v", i, failed)
				}
			}
			done := make(chan struct{})
			go func() { handlers.Wait(); close(done) }()
			receiveWithin(t, done, 2*time.Second, "the handlers to return")
			close(handlerErrs)
			for err := range handlerErrs {
				t.Error(err)
			}
		})
	})
}
