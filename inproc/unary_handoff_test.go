package inproc_test

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// withProcs runs f as subtests with GOMAXPROCS 1 and 2.
func withProcs(t *testing.T, f func(t *testing.T)) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			old := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(old)
			f(t)
		})
	}
}

// TestUnaryHandoffCancel cancels Isolated unary calls at random
// points around the handoff (before the handler runs, while it yields,
// as it finishes) for handlers that answer at once, yield first, wait for
// their context, or ignore it. Over a socket each call either succeeds
// with its own answer or fails with Canceled, and the client returns
// promptly once its context ended even when its handler ignores it.
func TestUnaryHandoffCancel(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("Inline cancellation is cooperative by design")
		}
		withProcs(t, func(t *testing.T) {
			release := make(chan struct{})
			var handlers sync.WaitGroup
			c, ch := newEcho(t, m, &funcEcho{get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
				handlers.Add(1)
				defer handlers.Done()
				var n int
				fmt.Sscanf(req.Text, "%d", &n)
				switch n % 4 {
				case 1:
					runtime.Gosched()
				case 2:
					<-ctx.Done()
					return nil, status.FromContextError(ctx.Err()).Err()
				case 3:
					<-release // ignores its context
				}
				return &echov1.EchoResponse{Text: req.Text}, nil
			}})
			defer func() {
				// A cancelled call's handler may not have begun yet: the
				// channel counts it from the call's start, so GracefulStop
				// waits for it, and no handler of this test runs into the
				// next one.
				close(release)
				ch.GracefulStop()
				handlers.Wait()
			}()
			r := rand.New(rand.NewSource(3))
			for i := range 400 {
				ctx, cancel := context.WithCancel(t.Context())
				delay := time.Duration(r.Intn(150)) * time.Microsecond
				var cancelled time.Time
				var mu sync.Mutex
				timer := time.AfterFunc(delay, func() {
					mu.Lock()
					cancelled = time.Now()
					mu.Unlock()
					cancel()
				})
				text := fmt.Sprint(i)
				done := make(chan struct{})
				var resp *echov1.EchoResponse
				var err error
				go func() {
					defer close(done)
					resp, err = c.Get(ctx, &echov1.EchoRequest{Text: text})
				}()
				select {
				case <-done:
				case <-time.After(waitLimit):
					t.Fatalf("call %d (handler kind %d) never returned", i, i%4)
				}
				returned := time.Now()
				timer.Stop()
				cancel()
				switch {
				case err == nil:
					if i%4 >= 2 {
						t.Fatalf("call %d: handler kind %d cannot have answered, got %v", i, i%4, resp)
					}
					if resp.GetText() != text {
						t.Fatalf("call %d: got %q, want %q", i, resp.GetText(), text)
					}
				case status.Code(err) == codes.Canceled:
					mu.Lock()
					at := cancelled
					mu.Unlock()
					if at.IsZero() {
						t.Fatalf("call %d: Canceled before its context ended: %v", i, err)
					}
					if d := returned.Sub(at); d > 500*time.Millisecond {
						t.Fatalf("call %d: returned %v after its context ended", i, d)
					}
				default:
					t.Fatalf("call %d: %v, want OK or Canceled", i, err)
				}
			}
		})
	})
}

// TestUnaryConcurrentResults: many callers, each its own
// answer, whatever the interleaving of handlers that finish before or
// after their client looks.
func TestUnaryConcurrentResults(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		withProcs(t, func(t *testing.T) {
			c, _ := newEcho(t, m, &funcEcho{get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
				switch len(req.Text) % 3 {
				case 1:
					runtime.Gosched()
				case 2:
					time.Sleep(time.Duration(len(req.Text)%5) * time.Microsecond)
				}
				return &echov1.EchoResponse{Text: req.Text + "!"}, nil
			}})
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Go(func() {
					for i := range 150 {
						text := fmt.Sprintf("%d/%d/%s", g, i, "xxxxxxx"[:i%7])
						resp, err := c.Get(t.Context(), &echov1.EchoRequest{Text: text})
						if err != nil || resp.GetText() != text+"!" {
							errs <- fmt.Errorf("caller %d call %d: %q, %v; want %q", g, i, resp.GetText(), err, text+"!")
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	})
}

// TestUnaryStopDuringHandoff stops (or gracefully stops) a
// channel while callers keep calling. Over a socket each call succeeds
// with its own answer or fails Unavailable (Canceled for one whose
// handler saw its context end); every caller returns soon after Stop;
// GracefulStop lets the calls in flight finish OK.
func TestUnaryStopDuringHandoff(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		t.Run(fmt.Sprintf("graceful=%v", graceful), func(t *testing.T) {
			forEachMode(t, func(t *testing.T, m testMode) {
				withProcs(t, func(t *testing.T) {
					r := rand.New(rand.NewSource(4))
					for round := range 20 {
						ch := inproc.New(m.opts...)
						echov1.RegisterEchoServer(ch, &funcEcho{get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
							if len(req.Text)%2 == 0 {
								runtime.Gosched()
							}
							return &echov1.EchoResponse{Text: req.Text}, nil
						}})
						c := echov1.NewEchoClient(ch)
						var wg sync.WaitGroup
						errs := make(chan error, 4)
						stopped := make(chan struct{})
						for g := range 4 {
							wg.Go(func() {
								for i := 0; ; i++ {
									text := fmt.Sprintf("%d-%d-%s", g, i, "x"[:i%2])
									resp, err := c.Get(t.Context(), &echov1.EchoRequest{Text: text})
									switch {
									case err == nil && resp.GetText() == text:
									case status.Code(err) == codes.Unavailable, status.Code(err) == codes.Canceled:
										return
									default:
										errs <- fmt.Errorf("round %d: %q, %v; want %q or Unavailable", round, resp.GetText(), err, text)
										return
									}
									select {
									case <-stopped:
										return
									default:
									}
								}
							})
						}
						time.Sleep(time.Duration(r.Intn(300)) * time.Microsecond)
						stopDone := make(chan struct{})
						go func() {
							if graceful {
								ch.GracefulStop()
							} else {
								ch.Stop()
							}
							close(stopDone)
						}()
						receiveWithin(t, stopDone, 2*time.Second, "Stop to return")
						close(stopped)
						allDone := make(chan struct{})
						go func() { wg.Wait(); close(allDone) }()
						receiveWithin(t, allDone, 2*time.Second, "the callers to return")
						close(errs)
						for err := range errs {
							t.Fatal(err)
						}
					}
				})
			})
		})
	}
}
