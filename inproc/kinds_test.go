package inproc_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
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
