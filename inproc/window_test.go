package inproc_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

var windows = []int{1, 2, 5, 16}

// settle waits quietWait, for a test to prove that something does not
// happen within it.
func settle() { <-time.After(quietWait) }

// TestWindowServerStream checks flow control from server to client: a
// handler whose client does not read completes exactly window Sends and
// then blocks (Isolated; an Inline handler runs only when its client waits
// for it, so it must not get past the window either); however the client
// reads, the handler is never more than window messages ahead; reading
// resumes it, and every message arrives in order.
func TestWindowServerStream(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, n := range windows {
			t.Run(fmt.Sprint("window=", n), func(t *testing.T) {
				total := 4*n + 3
				var sent atomic.Int64
				progress := make(chan int, total)
				c, _ := newEcho(t, m, &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					for i := range total {
						if err := s.Send(&echov1.EchoResponse{Text: strconv.Itoa(i)}); err != nil {
							return err
						}
						sent.Add(1)
						progress <- i
					}
					return nil
				}}, inproc.WithWindow(n))
				s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					t.Fatal(err)
				}

				// The client does not read.
				if isIsolated(t, m) {
					for range n {
						receive(t, progress, "the handler's Sends within the window")
					}
				}
				quiet(t, progress, fmt.Sprintf("a Send beyond the window (%d sent)", sent.Load()))
				if got := sent.Load(); got > int64(n) {
					t.Fatalf("the handler completed %d Sends to a client that reads nothing, want at most the window %d", got, n)
				}

				// The client reads, pausing once past the window.
				received := 0
				next := func() {
					t.Helper()
					r, err := s.Recv()
					if err != nil {
						t.Fatalf("Recv %d: %v", received, err)
					}
					if r.GetText() != strconv.Itoa(received) {
						t.Fatalf("message %d is %q", received, r.GetText())
					}
					received++
					if got := sent.Load(); got > int64(received+n) {
						t.Fatalf("the handler completed %d Sends when the client had received %d: more than the window %d ahead", got, received, n)
					}
				}
				for range n + 2 {
					next()
				}
				settle() // gives a handler that ignores the window time to run ahead
				if got := sent.Load(); got > int64(received+n) {
					t.Fatalf("the handler completed %d Sends when the client had received %d: more than the window %d ahead", got, received, n)
				}
				for received < total {
					next()
				}
				if _, err := s.Recv(); !errors.Is(err, io.EOF) {
					t.Fatalf("Recv after the last message: %v, want io.EOF", err)
				}
				if got := sent.Load(); got != int64(total) {
					t.Errorf("the handler completed %d Sends, want %d", got, total)
				}
			})
		}
	})
}

// TestWindowClientStream checks flow control from client to server: while
// the handler does not read, the client completes exactly window Sends and
// then blocks; once the handler reads, the client's Sends resume and every
// message arrives.
func TestWindowClientStream(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, n := range windows {
			t.Run(fmt.Sprint("window=", n), func(t *testing.T) {
				total := 4*n + 3
				release := make(chan struct{})
				releaseOnce := sync1(release)
				t.Cleanup(releaseOnce)
				c, _ := newEcho(t, m, &funcEcho{collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
					<-release
					got := 0
					for {
						r, err := s.Recv()
						if errors.Is(err, io.EOF) {
							return s.SendAndClose(&echov1.EchoResponse{Text: strconv.Itoa(got)})
						}
						if err != nil {
							return err
						}
						if r.GetText() != strconv.Itoa(got) {
							return fmt.Errorf("message %d is %q", got, r.GetText())
						}
						got++
					}
				}}, inproc.WithWindow(n))
				s, err := c.Collect(timeoutCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				var sent atomic.Int64
				progress := make(chan int, total)
				done := async(func() error {
					for i := range total {
						if err := s.Send(&echov1.EchoRequest{Text: strconv.Itoa(i)}); err != nil {
							return fmt.Errorf("Send %d: %w", i, err)
						}
						sent.Add(1)
						progress <- i
					}
					r, err := s.CloseAndRecv()
					if err != nil {
						return err
					}
					if r.GetText() != strconv.Itoa(total) {
						return fmt.Errorf("the handler received %s messages, want %d", r.GetText(), total)
					}
					return nil
				})
				for range n {
					receive(t, progress, "the client's Sends within the window")
				}
				quiet(t, progress, "a client Send beyond the window")
				if got := sent.Load(); got != int64(n) {
					t.Fatalf("the client completed %d Sends to a handler that reads nothing, want the window %d", got, n)
				}
				releaseOnce()
				if err := receive(t, done, "the client to finish"); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

// TestWindowBytes checks that the window bounds bytes as well as messages,
// in both directions: with messages of 1 MiB and a window of 64 messages,
// a sender whose receiver reads nothing completes no more Sends than fit
// in the byte window (one, if a single message is larger), as HTTP/2 flow
// control holds a stream to its window in bytes. Then the receiver reads
// and every message arrives.
func TestWindowBytes(t *testing.T) {
	const msgSize = 1 << 20
	text := strings.Repeat("z", msgSize)
	windows := []struct {
		name     string
		opts     []inproc.Option
		maxSends int64
	}{
		{"bytes=default", nil, max(inproc.DefaultWindowBytes/msgSize, 1)},
		{"bytes=4MiB", []inproc.Option{inproc.WithWindowBytes(4 << 20)}, 3}, // 4 messages and their framing do not fit
		{"bytes=1", []inproc.Option{inproc.WithWindowBytes(1)}, 1},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		if !isIsolated(t, m) {
			t.Skip("an Inline handler runs only while its client waits for it")
		}
		for _, w := range windows {
			t.Run("dir=server-to-client/"+w.name, func(t *testing.T) {
				const total = 16
				var sent atomic.Int64
				progress := make(chan struct{}, total)
				c, _ := newEcho(t, m, &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					for range total {
						if err := s.Send(&echov1.EchoResponse{Text: text}); err != nil {
							return err
						}
						sent.Add(1)
						progress <- struct{}{}
					}
					return nil
				}}, append([]inproc.Option{inproc.WithWindow(64)}, w.opts...)...)
				s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					t.Fatal(err)
				}
				receive(t, progress, "the handler's first Send")
				settle()
				if got := sent.Load(); got > w.maxSends {
					t.Fatalf("the handler completed %d Sends of 1 MiB to a client that reads nothing, want at most %d", got, w.maxSends)
				}
				for i := range total {
					if _, err := s.Recv(); err != nil {
						t.Fatalf("Recv %d: %v", i, err)
					}
				}
				if _, err := s.Recv(); !errors.Is(err, io.EOF) {
					t.Fatalf("Recv after the last message: %v, want io.EOF", err)
				}
			})
			t.Run("dir=client-to-server/"+w.name, func(t *testing.T) {
				const total = 16
				release := make(chan struct{})
				releaseOnce := sync1(release)
				t.Cleanup(releaseOnce)
				c, _ := newEcho(t, m, &funcEcho{collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
					<-release
					n := 0
					for {
						if _, err := s.Recv(); errors.Is(err, io.EOF) {
							return s.SendAndClose(&echov1.EchoResponse{Text: strconv.Itoa(n)})
						} else if err != nil {
							return err
						}
						n++
					}
				}}, append([]inproc.Option{inproc.WithWindow(64)}, w.opts...)...)
				s, err := c.Collect(timeoutCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				var sent atomic.Int64
				progress := make(chan struct{}, total)
				done := async(func() error {
					for i := range total {
						if err := s.Send(&echov1.EchoRequest{Text: text}); err != nil {
							return fmt.Errorf("Send %d: %w", i, err)
						}
						sent.Add(1)
						progress <- struct{}{}
					}
					r, err := s.CloseAndRecv()
					if err != nil {
						return err
					}
					if r.GetText() != strconv.Itoa(total) {
						return fmt.Errorf("the handler received %s messages, want %d", r.GetText(), total)
					}
					return nil
				})
				receive(t, progress, "the client's first Send")
				settle()
				if got := sent.Load(); got > w.maxSends {
					t.Fatalf("the client completed %d Sends of 1 MiB to a handler that reads nothing, want at most %d", got, w.maxSends)
				}
				releaseOnce()
				if err := receive(t, done, "the client to finish"); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

// TestWindowFullDuplexSizes: a bidi call where both sides send at
// once, each from its own goroutine, messages of random sizes (0 bytes,
// a few bytes, and larger than the byte window), with tiny windows. Every
// message must arrive, in order, and the call must end.
func TestWindowFullDuplexSizes(t *testing.T) {
	const n = 300
	sizes := func(seed uint64) []int {
		r := rand.New(rand.NewPCG(seed, 1))
		s := make([]int, n)
		for i := range s {
			switch r.IntN(4) {
			case 0:
				s[i] = 0
			case 1:
				s[i] = r.IntN(8)
			case 2:
				s[i] = r.IntN(200)
			default:
				s[i] = 1000 + r.IntN(3000)
			}
		}
		return s
	}
	msg := func(i, size int) string {
		if size == 0 {
			return ""
		}
		p := strconv.Itoa(i) + ":"
		return p + strings.Repeat("z", max(size-len(p), 0))
	}
	check := func(i int, got string, size int) error {
		if want := msg(i, size); got != want {
			return fmt.Errorf("message %d: got %d bytes %.10q, want %d bytes", i, len(got), got, len(want))
		}
		return nil
	}
	up, down := sizes(1), sizes(2)
	// The handler sends from a goroutine of its own while it receives
	// (duplex), or interleaves one Send per Recv on its own goroutine.
	handler := func(duplex bool) *funcEcho {
		return &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			sendAll := func(from int) error {
				for i := from; i < n; i++ {
					if err := s.Send(&echov1.EchoResponse{Text: msg(i, down[i])}); err != nil {
						return err
					}
				}
				return nil
			}
			sent := make(chan error, 1)
			next := 0
			if duplex {
				go func() { sent <- sendAll(0) }()
				next = n
			}
			for i := 0; ; i++ {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					if i != n {
						return fmt.Errorf("EOF after %d", i)
					}
					break
				}
				if err != nil {
					return err
				}
				if err := check(i, r.GetText(), up[i]); err != nil {
					return err
				}
				if !duplex && next < n {
					if err := s.Send(&echov1.EchoResponse{Text: msg(next, down[next])}); err != nil {
						return err
					}
					next++
				}
			}
			if !duplex {
				sent <- sendAll(next)
			}
			return <-sent
		}}
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, duplex := range []bool{false, true} {
			if duplex && !isIsolated(t, m) {
				continue // see TestInlineHandlerSendsFromGoroutine
			}
			srv := handler(duplex)
			for _, w := range []struct{ msgs, bytes int }{{1, 1}, {1, 1000}, {2, 1}, {2, 150}, {64, 1}, {64, 2500}, {3, 5000}} {
				t.Run(fmt.Sprintf("duplex=%v/window=%d/bytes=%d", duplex, w.msgs, w.bytes), func(t *testing.T) {
					c, _ := newEcho(t, m, srv, inproc.WithWindow(w.msgs), inproc.WithWindowBytes(w.bytes))
					s, err := c.Update(timeoutCtx(t))
					if err != nil {
						t.Fatal(err)
					}
					sent := async(func() error {
						for i, size := range up {
							if err := s.Send(&echov1.EchoRequest{Text: msg(i, size)}); err != nil {
								return fmt.Errorf("Send %d: %w", i, err)
							}
						}
						return s.CloseSend()
					})
					for i := 0; ; i++ {
						r, err := s.Recv()
						if errors.Is(err, io.EOF) {
							if i != n {
								t.Fatalf("EOF after %d", i)
							}
							break
						}
						if err != nil {
							t.Fatalf("Recv %d: %v", i, err)
						}
						if err := check(i, r.GetText(), down[i]); err != nil {
							t.Fatal(err)
						}
					}
					if err := receive(t, sent, "the client's sends"); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	})
}
