package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStreamMessagesReachClientBeforeHandlerWaits: a handler that sends a
// few messages, fewer than the window, and then waits for what its client
// does only once it has read them (cancel the call, or close a channel)
// gets them to the client first, as over a socket, in every mode and at
// GOMAXPROCS 1 and 2. That is why an Inline handler hands its client each
// message as it sends it, not once per window: one that went on to wait
// would hold the client, whose goroutine drives it, for ever.
func TestStreamMessagesReachClientBeforeHandlerWaits(t *testing.T) {
	for _, sent := range []int{1, 3} {
		for _, until := range []string{"cancel", "signal"} {
			t.Run(fmt.Sprintf("sent=%d/until=%s", sent, until), func(t *testing.T) {
				var mu sync.Mutex
				var release chan struct{}
				srv := &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					mu.Lock()
					r := release
					mu.Unlock()
					for i := range sent {
						if err := s.Send(&echov1.EchoResponse{Text: strconv.Itoa(i)}); err != nil {
							return err
						}
					}
					select {
					case <-r:
						return nil
					case <-s.Context().Done():
						return s.Context().Err()
					}
				}}
				run := func(t *testing.T, c echov1.EchoClient) {
					t.Helper()
					r := make(chan struct{})
					mu.Lock()
					release = r
					mu.Unlock()
					ctx, cancel := context.WithCancel(timeoutCtx(t))
					defer cancel()
					done := async(func() error {
						s, err := c.Expand(ctx, &echov1.EchoRequest{})
						if err != nil {
							return err
						}
						for i := range sent {
							resp, err := s.Recv()
							if err != nil {
								return fmt.Errorf("Recv %d: %v", i, err)
							}
							if resp.Text != strconv.Itoa(i) {
								return fmt.Errorf("Recv %d: %q", i, resp.Text)
							}
						}
						want := codes.OK
						if until == "cancel" {
							cancel()
							want = codes.Canceled
						} else {
							close(r)
						}
						_, err = s.Recv()
						switch {
						case want == codes.OK && !errors.Is(err, io.EOF):
							return fmt.Errorf("Recv after the handler returned: %v, want io.EOF", err)
						case want != codes.OK && status.Code(err) != want:
							return fmt.Errorf("Recv after cancel: %v, want %v", err, want)
						}
						return nil
					})
					if err := receive(t, done, "the client to read what the handler sent before it waits"); err != nil {
						t.Error(err)
					}
				}
				t.Run("grpc-go", func(t *testing.T) { run(t, echoOracle(t, srv, nil)) })
				forEachMode(t, func(t *testing.T, m testMode) {
					withProcs(t, func(t *testing.T) {
						c, _ := newEcho(t, m, srv)
						run(t, c)
					})
				})
			})
		}
	}
}
