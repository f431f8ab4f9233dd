package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestKinds calls each kind of method of the Echo service and checks the
// exact results.
func TestKinds(t *testing.T) {
	type result struct {
		texts []string
		err   error
	}
	cases := []struct {
		name string
		run  func(t *testing.T, c echov1.EchoClient) result
		want []string
	}{
		{"Get", func(t *testing.T, c echov1.EchoClient) result {
			r, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "hello, world"})
			return result{[]string{r.GetText()}, err}
		}, []string{"hello, world"}},
		{"Get/empty", func(t *testing.T, c echov1.EchoClient) result {
			r, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{})
			return result{[]string{r.GetText()}, err}
		}, []string{""}},
		{"Expand", func(t *testing.T, c echov1.EchoClient) result {
			s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{Text: "one two  three"})
			if err != nil {
				return result{nil, err}
			}
			texts, err := echotest.RecvAll(s.Recv)
			return result{texts, err}
		}, []string{"one", "two", "three"}},
		{"Expand/empty", func(t *testing.T, c echov1.EchoClient) result {
			s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
			if err != nil {
				return result{nil, err}
			}
			texts, err := echotest.RecvAll(s.Recv)
			return result{texts, err}
		}, nil},
		{"Collect", func(t *testing.T, c echov1.EchoClient) result {
			s, err := c.Collect(timeoutCtx(t))
			if err != nil {
				return result{nil, err}
			}
			for _, w := range []string{"a", "b", "c"} {
				if err := s.Send(&echov1.EchoRequest{Text: w}); err != nil {
					return result{nil, err}
				}
			}
			r, err := s.CloseAndRecv()
			return result{[]string{r.GetText()}, err}
		}, []string{"a b c"}},
		{"Collect/none", func(t *testing.T, c echov1.EchoClient) result {
			s, err := c.Collect(timeoutCtx(t))
			if err != nil {
				return result{nil, err}
			}
			r, err := s.CloseAndRecv()
			return result{[]string{r.GetText()}, err}
		}, []string{""}},
		{"Update/ping-pong", func(t *testing.T, c echov1.EchoClient) result {
			s, err := c.Update(timeoutCtx(t))
			if err != nil {
				return result{nil, err}
			}
			var texts []string
			for _, w := range []string{"x", "y", "z"} {
				if err := s.Send(&echov1.EchoRequest{Text: w}); err != nil {
					return result{texts, err}
				}
				r, err := s.Recv()
				if err != nil {
					return result{texts, err}
				}
				texts = append(texts, r.GetText())
			}
			if err := s.CloseSend(); err != nil {
				return result{texts, err}
			}
			if _, err := s.Recv(); !errors.Is(err, io.EOF) {
				return result{texts, fmt.Errorf("Recv after CloseSend: %v, want io.EOF", err)}
			}
			return result{texts, nil}
		}, []string{"x", "y", "z"}},
		{"Update/none", func(t *testing.T, c echov1.EchoClient) result {
			s, err := c.Update(timeoutCtx(t))
			if err != nil {
				return result{nil, err}
			}
			if err := s.CloseSend(); err != nil {
				return result{nil, err}
			}
			texts, err := echotest.RecvAll(s.Recv)
			return result{texts, err}
		}, nil},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, echo.Server{})
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got := tc.run(t, c)
				if got.err != nil {
					t.Fatalf("call failed: %v", got.err)
				}
				if !slices.Equal(got.texts, tc.want) {
					t.Errorf("got %q, want %q", got.texts, tc.want)
				}
			})
		}
	})
}

// TestBidiFullDuplex sends and receives hundreds of messages on one
// bidirectional stream from two goroutines at once, through a window of 2
// messages: it only completes if Send and Recv really run concurrently.
func TestBidiFullDuplex(t *testing.T) {
	const n = 500
	cases := []struct {
		name string
		srv  echov1.EchoServer
	}{
		// The server answers each message as it comes.
		{"echo", echo.Server{}},
		// The server sends all its messages before reading any: the
		// client's sender blocks until its receiver drains the server's.
		{"server-first", &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			for i := range n {
				if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint(i)}); err != nil {
					return err
				}
			}
			for i := 0; ; i++ {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					if i != n {
						return fmt.Errorf("server received %d messages, want %d", i, n)
					}
					return nil
				}
				if err != nil {
					return err
				}
				if r.GetText() != fmt.Sprint(i) {
					return fmt.Errorf("server received %q as message %d", r.GetText(), i)
				}
			}
		}}},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c, _ := newEcho(t, m, tc.srv, inproc.WithWindow(2))
				s, err := c.Update(timeoutCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				sent := async(func() error {
					for i := range n {
						if err := s.Send(&echov1.EchoRequest{Text: fmt.Sprint(i)}); err != nil {
							return fmt.Errorf("Send %d: %w", i, err)
						}
					}
					return s.CloseSend()
				})
				received := async(func() error {
					texts, err := echotest.RecvAll(s.Recv)
					if err != nil {
						return fmt.Errorf("Recv after %d messages: %w", len(texts), err)
					}
					if len(texts) != n {
						return fmt.Errorf("received %d messages, want %d", len(texts), n)
					}
					for i, txt := range texts {
						if txt != fmt.Sprint(i) {
							return fmt.Errorf("message %d is %q", i, txt)
						}
					}
					return nil
				})
				if err := receive(t, sent, "the sender"); err != nil {
					t.Error(err)
				}
				if err := receive(t, received, "the receiver"); err != nil {
					t.Error(err)
				}
			})
		}
	})
}

// TestHeaderWhileAnotherReceives waits for the header on one goroutine
// while another waits for a message, and the handler sends both only after
// the client's input: whichever goroutine resumes an inline handler, the
// other must see what it gave.
func TestHeaderWhileAnotherReceives(t *testing.T) {
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		r, err := s.Recv()
		if err != nil {
			return err
		}
		if err := s.SendHeader(metadata.Pairs("got", r.GetText())); err != nil {
			return err
		}
		return s.Send(&echov1.EchoResponse{Text: r.GetText()})
	}}
	forEachMode(t, func(t *testing.T, m testMode) {
		for i := range 20 {
			c, _ := newEcho(t, m, srv)
			s, err := c.Update(timeoutCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			header := async(func() error {
				md, err := s.Header()
				if err != nil {
					return fmt.Errorf("Header: %w", err)
				}
				if got := md.Get("got"); !slices.Equal(got, []string{fmt.Sprint(i)}) {
					return fmt.Errorf("header got=%q, want %q", got, fmt.Sprint(i))
				}
				return nil
			})
			received := async(func() error {
				texts, err := echotest.RecvAll(s.Recv)
				if err != nil {
					return fmt.Errorf("Recv: %w", err)
				}
				if !slices.Equal(texts, []string{fmt.Sprint(i)}) {
					return fmt.Errorf("received %q, want [%d]", texts, i)
				}
				return nil
			})
			if err := s.Send(&echov1.EchoRequest{Text: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			if err := receive(t, header, "the header"); err != nil {
				t.Error(err)
			}
			if err := receive(t, received, "the receiver"); err != nil {
				t.Error(err)
			}
		}
	})
}

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

// duplexHandler is a bidi handler that is full duplex on the server's
// side too: it receives on its own goroutine and sends from another, as
// gRPC allows (one sender and one receiver at a time).
var duplexHandler = &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	sent := make(chan error, 1)
	go func() {
		for i := range 50 {
			if err := s.Send(&echov1.EchoResponse{Text: strconv.Itoa(i)}); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	return <-sent
}}

func runDuplex(t *testing.T, c echov1.EchoClient) error {
	s, err := c.Update(timeoutCtx(t))
	if err != nil {
		return err
	}
	sent := async(func() error {
		for range 50 {
			if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
				return err
			}
		}
		return s.CloseSend()
	})
	for i := 0; ; i++ {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if r.GetText() != strconv.Itoa(i) {
			return errors.New("out of order: " + r.GetText())
		}
	}
	return receive(t, sent, "the client's sends")
}

// TestInlineHandlerSendsFromGoroutine: an Inline stream handler that
// sends from a goroutine it started (while it receives on its own) calls
// handed, and so the coroutine's yield, from a goroutine that is not the
// coroutine: iter.Pull panics ("yield called again before next") on that
// goroutine, which kills the process. Over grpc-go (and Isolated) the call
// works. The cases run in a child process so the crash is reported.
func TestInlineHandlerSendsFromGoroutine(t *testing.T) {
	if os.Getenv("INPROC_INLINE_DUPLEX_CHILD") != "" {
		forEachMode(t, func(t *testing.T, m testMode) {
			if m.name != os.Getenv("INPROC_INLINE_DUPLEX_CHILD") {
				t.Skip()
			}
			c, _ := newEcho(t, m, duplexHandler)
			for range 20 {
				if err := runDuplex(t, c); err != nil {
					t.Fatal(err)
				}
			}
		})
		return
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, duplexHandler) }, nil, nil))
	if err := runDuplex(t, ref); err != nil {
		t.Fatalf("reference: grpc-go: %v", err)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInlineHandlerSendsFromGoroutine$", "-test.count=1")
		cmd.Env = append(os.Environ(), "INPROC_INLINE_DUPLEX_CHILD="+m.name)
		out, err := cmd.CombinedOutput()
		if err != nil {
			lines := crashLines(out)
			t.Errorf("grpc-go: OK; inproc (child %v):\n%s", err, lines)
		}
	})
}
