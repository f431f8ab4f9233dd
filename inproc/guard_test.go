package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The misuse guard of a stream's queue is the busy bit of each side's
// index word (queue.enterSend, enterReceive): a second goroutine that
// sends (receives) while another does is refused with Internal, and the
// stream fails; nothing it delivers may be corrupt, doubled or out of
// order, and nothing may hang. These tests press on it from three and
// more goroutines at once, in every mode, with windows of one message, of
// a few bytes (messages larger than the window among them) and the
// default, and with senders that reuse their message (Clone must copy).

// guardWindows are the windows each guard test runs under.
var guardWindows = []struct {
	name string
	opts []inproc.Option
	// size is the payload of the i-th message of sender g.
	size func(g, i int) int
}{
	{"window=1", []inproc.Option{inproc.WithWindow(1)}, func(g, i int) int { return 8 + (g+i)%5 }},
	{"bytes=100", []inproc.Option{inproc.WithWindowBytes(100)}, func(g, i int) int { return []int{1, 30, 99, 100, 250}[(g+i)%5] }},
	{"default", nil, func(g, i int) int { return 1 + (g*7+i)%40 }},
}

const guardSenders, guardSends = 3, 300

// guardedMsg returns the i-th message of sender g: m itself, refilled in
// place, as a sender that reuses its message does, but with Share, whose
// senders must not change what they sent, a new one.
func guardedMsg(share bool, m *flat3.Flat, g, i, size int) *flat3.Flat {
	if share {
		m = &flat3.Flat{}
	}
	fillGuarded(m, g, i, size)
	return m
}

// fillGuarded makes m the i-th message of sender g, reusing m's arrays.
func fillGuarded(m *flat3.Flat, g, i, size int) {
	m.S = strconv.Itoa(g) + ":" + strconv.Itoa(i)
	m.B = m.B[:0]
	for range size {
		m.B = append(m.B, byte(g*31+i))
	}
	m.Names = append(m.Names[:0], m.S)
}

// guardedCheck tells what is wrong with m, which claims to be a message
// fillGuarded made, and returns its sender and number.
func guardedCheck(m *flat3.Flat, size func(g, i int) int) (g, i int, bad string) {
	gs, is, ok := strings.Cut(m.GetS(), ":")
	g, err1 := strconv.Atoi(gs)
	i, err2 := strconv.Atoi(is)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Sprintf("a message %q no sender sent", m.GetS())
	}
	if len(m.B) != size(g, i) {
		return g, i, fmt.Sprintf("%s has %d bytes, want %d", m.S, len(m.B), size(g, i))
	}
	for _, b := range m.B {
		if b != byte(g*31+i) {
			return g, i, fmt.Sprintf("%s has a byte %#x, want %#x", m.S, b, byte(g*31+i))
		}
	}
	if len(m.Names) != 1 || m.Names[0] != m.S {
		return g, i, fmt.Sprintf("%s has names %q", m.S, m.Names)
	}
	return g, i, ""
}

// inOrder checks that each sender's messages arrive intact, once each,
// in the order sent: last holds each sender's last number.
type inOrder struct {
	mu   sync.Mutex
	last map[int]int
	n    int
}

func (o *inOrder) see(m *flat3.Flat, size func(g, i int) int, ordered bool) error {
	g, i, bad := guardedCheck(m, size)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		o.last = map[int]int{}
	}
	if bad == "" {
		if prev, seen := o.last[g]; seen && (i == prev || ordered && i < prev) {
			bad = fmt.Sprintf("%s after %d:%d: doubled or out of order", m.S, g, prev)
		}
	}
	if bad != "" {
		return status.Error(codes.DataLoss, bad)
	}
	o.last[g] = i
	o.n++
	return nil
}

// wantGuardErr fails the test unless err is what a refused or ended call
// of a misused stream may say: nil, io.EOF, or one of codes.
func wantGuardErr(t *testing.T, what string, err error, want ...codes.Code) {
	t.Helper()
	if err != nil && !errors.Is(err, io.EOF) && !isCode(err, want...) {
		t.Errorf("%s: %v, want io.EOF or one of %v", what, err, want)
	}
}

// receivingChannel returns a channel whose bidi handler receives
// flat3.Flat messages into got until the end of input, and the channel
// its error goes to.
func receivingChannel(t *testing.T, mode testMode, opts []inproc.Option, size func(g, i int) int, got *inOrder) (*inproc.Channel, <-chan error) {
	handlerErr := make(chan error, 1)
	ch := newChannel(t, mode, opts...)
	ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
		err := eachFlat(ss, func(in *flat3.Flat) error { return got.see(in, size, true) })
		handlerErr <- err
		return err
	}})
	return ch, handlerErr
}

// eachFlat receives flat3.Flat messages on ss, each into a new one, and
// gives each to f until the end of input (nil) or an error.
func eachFlat(ss grpc.ServerStream, f func(*flat3.Flat) error) error {
	for {
		in := &flat3.Flat{}
		if err := ss.RecvMsg(in); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if err := f(in); err != nil {
			return err
		}
	}
}

// openBidi opens a bidi stream of anyDesc on ch. cancel ends its context,
// as the test's end does.
func openBidi(t *testing.T, ch *inproc.Channel) (grpc.ClientStream, context.CancelFunc) {
	ctx, cancel := context.WithCancel(timeoutCtx(t))
	t.Cleanup(cancel)
	s, err := ch.NewStream(ctx, anyBidiDesc, anyBidi)
	if err != nil {
		t.Fatal(err)
	}
	return s, cancel
}

// sendFromSeveral sends guardSends messages from each of guardSenders
// goroutines at once through send, and returns once all stopped, each
// sender's error (nil if it sent them all) in errs.
func sendFromSeveral(share bool, size func(g, i int) int, send func(any) error, errs chan<- error) {
	var wg sync.WaitGroup
	for g := range guardSenders {
		wg.Go(func() {
			m := &flat3.Flat{}
			for i := range guardSends {
				m = guardedMsg(share, m, g, i, size(g, i))
				if err := send(m); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		})
	}
	wg.Wait()
}

// TestGuardClientSenders: three client goroutines send on one stream at
// once. The handler receives what they sent intact, each message once and
// each sender's in order; a refused Send says Internal, and then so does
// the stream; if none was refused, every message arrived.
func TestGuardClientSenders(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode testMode) {
		share := isShare(t, mode)
		for _, w := range guardWindows {
			t.Run(w.name, func(t *testing.T) {
				got := &inOrder{}
				ch, handlerErr := receivingChannel(t, mode, w.opts, w.size, got)
				s, cancel := openBidi(t, ch)
				errs := make(chan error, guardSenders)
				sendFromSeveral(share, w.size, s.SendMsg, errs)
				close(errs)
				refused := false
				for err := range errs {
					wantGuardErr(t, "a concurrent SendMsg", err, codes.Internal)
					refused = refused || status.Code(err) == codes.Internal
				}
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
				recvErr := s.RecvMsg(&flat3.Flat{})
				if refused {
					wantCode(t, "RecvMsg after a refused SendMsg", recvErr, codes.Internal)
					cancel()
				} else if !errors.Is(recvErr, io.EOF) {
					t.Errorf("RecvMsg after senders that never overlapped: %v, want io.EOF", recvErr)
				}
				receive(t, async(func() error { ch.GracefulStop(); return nil }), "the call to end")
				select {
				case err := <-handlerErr:
					wantGuardErr(t, "the handler", err, codes.Canceled, codes.Internal)
					if err == nil && !refused && got.n != guardSenders*guardSends {
						t.Errorf("the handler received %d messages, want %d", got.n, guardSenders*guardSends)
					}
				default:
					if !refused {
						t.Errorf("the handler did not end with its stream")
					}
				}
			})
		}
	})
}

// TestGuardClientReceivers: three client goroutines receive from one
// stream at once. Each message a receiver gets is one the handler sent,
// intact, and no two get the same one; a refused RecvMsg says Internal.
func TestGuardClientReceivers(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode testMode) {
		share := isShare(t, mode)
		for _, w := range guardWindows {
			t.Run(w.name, func(t *testing.T) {
				const n = guardSenders * guardSends
				ch := newChannel(t, mode, w.opts...)
				ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
					out := &flat3.Flat{}
					for i := range n {
						out = guardedMsg(share, out, 0, i, w.size(0, i))
						if err := ss.SendMsg(out); err != nil {
							return err
						}
					}
					return nil
				}})
				s, cancel := openBidi(t, ch)
				if err := s.CloseSend(); err != nil {
					t.Fatal(err)
				}
				got := &inOrder{}
				errs := make(chan error, guardSenders)
				var wg sync.WaitGroup
				for range guardSenders {
					wg.Go(func() {
						for {
							in := &flat3.Flat{}
							if err := s.RecvMsg(in); err != nil {
								errs <- err
								return
							}
							// Receivers race to report: only doubles are
							// wrong, not the order they are seen in.
							if err := got.see(in, w.size, false); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				refused := false
				for err := range errs {
					wantGuardErr(t, "a concurrent RecvMsg", err, codes.Internal)
					refused = refused || status.Code(err) == codes.Internal
				}
				if !refused && got.n != n {
					t.Errorf("receivers that never overlapped got %d messages, want %d", got.n, n)
				}
				cancel()
				receive(t, async(func() error { ch.GracefulStop(); return nil }), "the call to end")
			})
		}
	})
}

// TestGuardHandlerSenders: three goroutines of an Isolated handler send
// at once. The client receives what they sent intact, each once, in each
// sender's order, then io.EOF or Internal.
func TestGuardHandlerSenders(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode testMode) {
		share := isShare(t, mode)
		if !isIsolated(t, mode) {
			t.Skip("an Inline handler is a coroutine of its client: its other goroutines cannot drive it")
		}
		for _, w := range guardWindows {
			t.Run(w.name, func(t *testing.T) {
				sendErrs := make(chan error, guardSenders)
				ch := newChannel(t, mode, w.opts...)
				ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
					sendFromSeveral(share, w.size, ss.SendMsg, sendErrs)
					return nil
				}})
				s, cancel := openBidi(t, ch)
				got := &inOrder{}
				var recvErr error
				for {
					in := &flat3.Flat{}
					if recvErr = s.RecvMsg(in); recvErr != nil {
						break
					}
					if err := got.see(in, w.size, true); err != nil {
						t.Fatal(err)
					}
				}
				wantGuardErr(t, "RecvMsg", recvErr, codes.Internal)
				cancel()
				for range guardSenders {
					err := receive(t, sendErrs, "a handler's sender to end")
					wantGuardErr(t, "a handler's concurrent SendMsg", err, codes.Internal, codes.Canceled)
				}
				if errors.Is(recvErr, io.EOF) && got.n != guardSenders*guardSends {
					t.Errorf("a stream that ended well gave %d messages, want %d", got.n, guardSenders*guardSends)
				}
			})
		}
	})
}

// TestGuardCloseSendRacesSend: CloseSend from one goroutine while another
// sends in a loop (which gRPC forbids). Whatever wins, the handler gets
// intact messages in order and then an end, the sender's last SendMsg
// fails, and nothing hangs.
func TestGuardCloseSendRacesSend(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode testMode) {
		share := isShare(t, mode)
		for _, w := range guardWindows {
			t.Run(w.name, func(t *testing.T) {
				for round := range 20 {
					got := &inOrder{}
					ch, handlerErr := receivingChannel(t, mode, w.opts, w.size, got)
					ctx, cancel := context.WithCancel(timeoutCtx(t))
					s, err := ch.NewStream(ctx, anyBidiDesc, anyBidi)
					if err != nil {
						t.Fatal(err)
					}
					sent := async(func() error {
						m := &flat3.Flat{}
						for i := 0; ; i++ {
							m = guardedMsg(share, m, 0, i, w.size(0, i))
							if err := s.SendMsg(m); err != nil {
								return err
							}
						}
					})
					// A varying head start for the sender: at one processor a
					// sender that never blocks (Inline) keeps it a time slice.
					for range round % 4 {
						runtime.Gosched()
					}
					if err := s.CloseSend(); err != nil {
						t.Fatal(err)
					}
					err = receive(t, sent, "the sender to fail after CloseSend")
					if err == nil || !errors.Is(err, io.EOF) && !isCode(err, codes.Internal) {
						t.Errorf("round %d: SendMsg after CloseSend: %v, want io.EOF or Internal", round, err)
					}
					recvErr := async(func() error { return s.RecvMsg(&flat3.Flat{}) })
					rerr := receive(t, recvErr, "RecvMsg to end")
					wantGuardErr(t, "RecvMsg", rerr, codes.Internal, codes.Canceled)
					cancel()
					receive(t, async(func() error { ch.GracefulStop(); return nil }), "the call to end")
					select {
					case err := <-handlerErr:
						wantGuardErr(t, "the handler", err, codes.Canceled, codes.Internal)
					default:
					}
				}
			})
		}
	})
}

// TestGuardCancelParkedSenders: with the window full and a handler that
// does not read, two client goroutines send; the one that gets in parks
// for room, the other is refused or parks behind; a cancel ends both,
// with Canceled, Internal or io.EOF, and the call ends.
func TestGuardCancelParkedSenders(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode testMode) {
		share := isShare(t, mode)
		for _, w := range guardWindows {
			t.Run(w.name, func(t *testing.T) {
				release := make(chan struct{})
				ch := newChannel(t, mode, w.opts...)
				ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
					select {
					case <-ss.Context().Done():
					case <-release:
					}
					return ss.Context().Err()
				}})
				defer close(release)
				ctx, cancel := context.WithCancel(timeoutCtx(t))
				s, err := ch.NewStream(ctx, anyBidiDesc, anyBidi)
				if err != nil {
					t.Fatal(err)
				}
				errs := make(chan error, 2)
				for g := range 2 {
					go func() {
						m := &flat3.Flat{}
						for i := 0; ; i++ {
							m = guardedMsg(share, m, g, i, w.size(g, i))
							if err := s.SendMsg(m); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				settle()
				cancel()
				for range 2 {
					err := receive(t, errs, "a parked SendMsg to end")
					wantGuardErr(t, "a parked SendMsg", err, codes.Canceled, codes.Internal)
				}
				wantCode(t, "RecvMsg", s.RecvMsg(&flat3.Flat{}), codes.Canceled, codes.Internal)
			})
		}
	})
}

// TestGuardFullDuplex: what gRPC allows, one client goroutine sending and
// another receiving, on a handler that echoes each message, through
// windows of one message, of eight (a parked sender wakes only once two
// are free), of 100 bytes and the default: each side's guard is taken
// and let go by one goroutine while the other side's moves, and a parked
// side must be woken. Every message comes back intact, in order, and the
// stream ends well.
func TestGuardFullDuplex(t *testing.T) {
	const n = 1000
	windows := append(guardWindows[:len(guardWindows):len(guardWindows)], struct {
		name string
		opts []inproc.Option
		size func(g, i int) int
	}{"window=8", []inproc.Option{inproc.WithWindow(8)}, func(_, i int) int { return 1 + i%9 }})
	forEachMode(t, func(t *testing.T, mode testMode) {
		share := isShare(t, mode)
		for _, w := range windows {
			t.Run(w.name, func(t *testing.T) {
				ch := newChannel(t, mode, w.opts...)
				ch.RegisterService(anyDesc, &anySvc{bidi: func(ss grpc.ServerStream) error {
					return eachFlat(ss, func(in *flat3.Flat) error { return ss.SendMsg(in) })
				}})
				s, err := ch.NewStream(timeoutCtx(t), anyBidiDesc, anyBidi)
				if err != nil {
					t.Fatal(err)
				}
				sent := async(func() error {
					m := &flat3.Flat{}
					for i := range n {
						m = guardedMsg(share, m, 0, i, w.size(0, i))
						if err := s.SendMsg(m); err != nil {
							return err
						}
					}
					return s.CloseSend()
				})
				got := &inOrder{}
				for {
					in := &flat3.Flat{}
					if err := s.RecvMsg(in); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						t.Fatalf("after %d messages: %v", got.n, err)
					}
					if err := got.see(in, w.size, true); err != nil {
						t.Fatal(err)
					}
				}
				if err := receive(t, sent, "the sender to end"); err != nil {
					t.Fatal(err)
				}
				if got.n != n {
					t.Errorf("%d messages came back, want %d", got.n, n)
				}
			})
		}
	})
}
