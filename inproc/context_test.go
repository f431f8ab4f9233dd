package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc/codes"
)

// TestDeadlineReachesHandler checks that the handler's context has exactly
// the client's deadline, and none when the client has none.
func TestDeadlineReachesHandler(t *testing.T) {
	type deadline struct {
		at time.Time
		ok bool
	}
	cases := []struct {
		name string
		ctx  func(t *testing.T) (context.Context, deadline)
	}{
		{"deadline", func(t *testing.T) (context.Context, deadline) {
			d := time.Now().Add(time.Hour).Round(0)
			ctx, cancel := context.WithDeadline(t.Context(), d)
			t.Cleanup(cancel)
			return ctx, deadline{d, true}
		}},
		{"no-deadline", func(t *testing.T) (context.Context, deadline) {
			return t.Context(), deadline{}
		}},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan deadline, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			d, ok := ctx.Deadline()
			seen <- deadline{d, ok}
			return nil
		}))
		for _, kind := range echoKinds {
			for _, tc := range cases {
				t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
					ctx, want := tc.ctx(t)
					if err := kind.call(ctx, c); err != nil {
						t.Fatal(err)
					}
					got := receive(t, seen, "the handler")
					if got.ok != want.ok || !got.at.Equal(want.at) {
						t.Errorf("handler's deadline is %v (%v), want %v (%v)", got.at, got.ok, want.at, want.ok)
					}
				})
			}
		}
	})
}

// TestContextEndReachesHandler checks that the client's cancellation and
// deadline end the handler's context with the same error, and that the
// client gets the matching code.
func TestContextEndReachesHandler(t *testing.T) {
	cases := []struct {
		name        string
		ctx         func(t *testing.T) (context.Context, context.CancelFunc)
		wantHandler error
		wantCode    codes.Code
	}{
		{"cancel", func(t *testing.T) (context.Context, context.CancelFunc) {
			return context.WithCancel(t.Context())
		}, context.Canceled, codes.Canceled},
		{"deadline", func(t *testing.T) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
			t.Cleanup(cancel)
			return ctx, func() {} // the deadline ends it
		}, context.DeadlineExceeded, codes.DeadlineExceeded},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		started := make(chan struct{}, 1)
		ended := make(chan error, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				ended <- ctx.Err()
			case <-time.After(waitLimit):
				ended <- errors.New("the handler's context did not end")
			}
			return ctx.Err()
		}))
		for _, kind := range echoKinds {
			for _, tc := range cases {
				t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
					ctx, end := tc.ctx(t)
					res := async(func() error { return kind.call(ctx, c) })
					receive(t, started, "the handler to start")
					end()
					if err := receive(t, ended, "the handler's context to end"); err != tc.wantHandler {
						t.Errorf("handler's ctx.Err() = %v, want %v", err, tc.wantHandler)
					}
					wantCode(t, "client", receive(t, res, "the client"), tc.wantCode)
				})
			}
		}
	})
}

type valueKey struct{}

// TestClientValuesDoNotReachHandler checks that the handler's context does
// not carry the client's context values: a network would not carry them.
func TestClientValuesDoNotReachHandler(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan any, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			seen <- ctx.Value(valueKey{})
			return nil
		}))
		for _, kind := range echoKinds {
			t.Run(kind.name, func(t *testing.T) {
				ctx := context.WithValue(timeoutCtx(t), valueKey{}, "secret")
				if err := kind.call(ctx, c); err != nil {
					t.Fatal(err)
				}
				if v := receive(t, seen, "the handler"); v != nil {
					t.Errorf("handler's context has the client's value %v", v)
				}
			})
		}
	})
}

// promptLimit is how soon an Isolated client must return once its context
// ends, whatever its handler does. The handlers of the test block until
// the test ends, so any bound well below waitLimit proves the client does
// not wait for them; this one leaves room for a machine whose CPUs are all
// busy, where a woken goroutine may wait tens of milliseconds to run.
// (Quiet, the client returns within microseconds.)
const promptLimit = waitLimit / 2

// TestIsolatedClientReturnsPromptly checks that with Isolated execution a
// client returns within promptLimit of its context ending although the
// handler blocks ignoring its context, whether the client waits for a
// response or is blocked sending. The handlers are released when the test
// ends, and goleak (TestMain) proves their goroutines end.
func TestIsolatedClientReturnsPromptly(t *testing.T) {
	type ending struct {
		name     string
		ctx      func(t *testing.T) (context.Context, context.CancelFunc)
		wantCode codes.Code
	}
	endings := []ending{
		{"cancel", func(t *testing.T) (context.Context, context.CancelFunc) {
			return context.WithCancel(t.Context())
		}, codes.Canceled},
		{"deadline", func(t *testing.T) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			t.Cleanup(cancel)
			return ctx, nil
		}, codes.DeadlineExceeded},
	}
	// Clients blocked sending: the handler never reads, the window is 2.
	blockedSend := []struct {
		name string
		call func(ctx context.Context, c echov1.EchoClient) error
	}{
		{"client-stream/blocked-send", func(ctx context.Context, c echov1.EchoClient) error {
			s, err := c.Collect(ctx)
			if err != nil {
				return err
			}
			if err := sendUntilBlocked(s.Send); err != nil {
				return err
			}
			_, err = s.CloseAndRecv()
			return err
		}},
		{"bidi/blocked-send", func(ctx context.Context, c echov1.EchoClient) error {
			s, err := c.Update(ctx)
			if err != nil {
				return err
			}
			if err := sendUntilBlocked(s.Send); err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}},
	}

	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("with Inline execution cancellation is cooperative by design")
		}
		run := func(t *testing.T, e ending, call func(ctx context.Context, c echov1.EchoClient) error) {
			started := make(chan struct{}, 1)
			release := make(chan struct{})
			returned := make(chan struct{}, 1)
			c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
				started <- struct{}{}
				<-release // ignores ctx
				returned <- struct{}{}
				return nil
			}), inproc.WithWindow(2))
			t.Cleanup(func() {
				close(release)
				receive(t, returned, "the released handler to return")
			})
			ctx, cancel := e.ctx(t)
			type result struct {
				err error
				at  time.Time
			}
			res := make(chan result, 1)
			go func() {
				err := call(ctx, c)
				res <- result{err, time.Now()}
			}()
			receive(t, started, "the handler to start")
			var ended time.Time
			if cancel != nil {
				ended = time.Now()
				cancel()
			} else {
				ended, _ = ctx.Deadline()
			}
			r := receive(t, res, "the client to return")
			if took := r.at.Sub(ended); took > promptLimit {
				t.Errorf("the client returned %v after its context ended, want at most %v", took, promptLimit)
			}
			wantCode(t, "client", r.err, e.wantCode)
		}
		for _, kind := range echoKinds {
			for _, e := range endings {
				t.Run(kind.name+"/"+e.name, func(t *testing.T) {
					run(t, e, func(ctx context.Context, c echov1.EchoClient) error { return kind.call(ctx, c) })
				})
			}
		}
		for _, bs := range blockedSend {
			t.Run(bs.name+"/deadline", func(t *testing.T) { run(t, endings[1], bs.call) })
		}
	})
}

// sendUntilBlocked sends until Send fails, which it must do once the
// stream's context ends; it returns an error if Send never blocks.
func sendUntilBlocked(send func(*echov1.EchoRequest) error) error {
	for range 100_000 {
		if err := send(&echov1.EchoRequest{Text: "x"}); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the receiving side tells why
			}
			return err
		}
	}
	return fmt.Errorf("Send never blocked")
}
