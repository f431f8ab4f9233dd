package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// TestCancelAnywhere: bidi calls moving large and empty messages
// through tiny windows, each ended at a random moment by the client's
// cancel, its deadline, Stop, or GracefulStop racing with Stop. Every call
// must end with a sensible code, nothing may hang, and (TestMain's goleak)
// no goroutine may survive.
func TestCancelAnywhere(t *testing.T) {
	big := strings.Repeat("b", 3000)
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		for {
			r, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			for range 3 {
				if err := s.Send(&echov1.EchoResponse{Text: r.GetText()}); err != nil {
					return err
				}
			}
		}
	}}
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, how := range []string{"cancel", "deadline", "stop", "graceful"} {
			t.Run(how, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(how)), 7))
				for iter := range 30 {
					ch := inproc.New(append(m.opts, inproc.WithWindow(1+r.IntN(3)), inproc.WithWindowBytes(1+r.IntN(5000)))...)
					echov1.RegisterEchoServer(ch, srv)
					c := echov1.NewEchoClient(ch)
					ctx, cancel := context.WithCancel(t.Context())
					if how == "deadline" {
						ctx, cancel = context.WithTimeout(t.Context(), time.Duration(r.IntN(2000))*time.Microsecond)
					}
					delay := time.Duration(r.IntN(1500)) * time.Microsecond
					var wg sync.WaitGroup
					errs := make(chan error, 3)
					s, err := c.Update(ctx)
					if err != nil {
						errs <- err
					} else {
						wg.Go(func() {
							for i := 0; ; i++ {
								text := big
								if i%3 == 0 {
									text = ""
								}
								if err := s.Send(&echov1.EchoRequest{Text: text}); err != nil {
									return
								}
							}
						})
						wg.Go(func() {
							for {
								if _, err := s.Recv(); err != nil {
									errs <- err
									return
								}
							}
						})
					}
					time.Sleep(delay)
					switch how {
					case "cancel":
						cancel()
					case "stop":
						ch.Stop()
					case "graceful":
						go ch.GracefulStop()
						time.Sleep(delay / 2)
						ch.Stop()
					}
					done := make(chan struct{})
					go func() { wg.Wait(); close(done) }()
					select {
					case <-done:
					case <-time.After(waitLimit):
						cancel()
						ch.Stop()
						t.Fatalf("iteration %d: the call did not end within %v of its %s", iter, waitLimit, how)
					}
					if err := <-errs; err != nil && !errors.Is(err, io.EOF) {
						wantCode(t, fmt.Sprintf("iteration %d", iter), err, codes.Canceled, codes.DeadlineExceeded, codes.Unavailable)
					}
					cancel()
					ch.Stop()
				}
			})
		}
	})
}
