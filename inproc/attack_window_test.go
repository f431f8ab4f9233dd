package inproc_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// TestAttackWindowFullDuplexSizes: a bidi call where both sides send at
// once, each from its own goroutine, messages of random sizes (0 bytes,
// a few bytes, and larger than the byte window), with tiny windows. Every
// message must arrive, in order, and the call must end.
func TestAttackWindowFullDuplexSizes(t *testing.T) {
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
				continue // see TestAttackInlineHandlerSendsFromGoroutine
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
