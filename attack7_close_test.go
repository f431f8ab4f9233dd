package localgrpc_test

// attack7: closing a client connection (inproc: against grpc-go over
// bufconn, shm: against grpc-go over a unix socket): many messages queued
// on a bidi stream whose header was never read, messages over the flow
// control window, a handler that sends its header and trailer only after
// the close, Close racing SendHeader, calls made after Close, a client
// stream whose response had arrived before the close.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Small messages queued, none read, not even the header, when the
// connection closes: 50 (under inproc's documented 64-message window) on
// every side, and 100 over unix and shm: (whose Send returned for each).
func TestAttack7CloseManyQueuedHeaderUnread(t *testing.T) {
	for _, count := range []int{50, 100} {
		sides := a6Sides(false)
		if count == 100 {
			sides = sides[len(sides)-2:]
		}
		t.Run(fmt.Sprint(count), func(t *testing.T) { a7ManyQueued(t, sides, count) })
	}
}

func a7ManyQueued(t *testing.T, sides []a6Side, count int) {
	a6Compare(t, sides, 2, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		sent, ended := make(chan struct{}), make(chan struct{})
		cc := conn(&a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			s.SetHeader(metadata.Pairs("h", "1"))
			s.SetTrailer(metadata.Pairs("t", "1"))
			for i := range count {
				if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint(i)}); err != nil {
					return err
				}
			}
			close(sent)
			<-s.Context().Done()
			close(ended)
			return nil
		}}, a6Opts{})
		st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
		if err != nil {
			return a6Err(err)
		}
		out := a7Wait(sent, "handler sent")
		time.Sleep(50 * time.Millisecond) // what was sent has arrived
		cc.Close()
		out += a7Wait(ended, "handler ctx end")
		n, ok := 0, true
		var rerr error
		for {
			m, err := st.Recv()
			if err != nil {
				rerr = err
				break
			}
			ok = ok && m.Text == fmt.Sprint(n)
			n++
		}
		h, herr := st.Header()
		tr := st.Trailer()
		serr := st.Send(&echov1.EchoRequest{})
		cerr := st.CloseSend()
		s2err := st.Send(&echov1.EchoRequest{})
		return out + fmt.Sprintf("Recv %d in order %v then %s; Header %v %s; Trailer %v; Send %s; CloseSend %s; Send %s",
			n, ok, a6Err(rerr), mdString(h), a6Err(herr), mdString(tr), a6Err(serr), a6Err(cerr), a6Err(s2err))
	})
}

func a7Wait(c <-chan struct{}, what string) string {
	select {
	case <-c:
		return ""
	case <-time.After(time.Second):
		return what + " did not happen in 1s; "
	}
}

// Messages of 100 KB, over the stream's flow control window, sent while
// the client reads nothing: the handler blocks in Send. At Close the
// client's Recv returns whole messages only, in order, then Canceled;
// the handler's Send fails and its context ends.
func TestAttack7CloseMessagesOverWindow(t *testing.T) {
	big := strings.Repeat("w", 100<<10)
	for _, s := range a6Sides(false) {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range 2 {
				hres := make(chan string, 1)
				cc := s.conn(t, &a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
					for i := range 40 {
						if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint(i, big)}); err != nil {
							hres <- fmt.Sprintf("handler Send failed (%v), ctx %v", status.Code(err), s.Context().Err())
							return err
						}
					}
					hres <- "handler sent all 40 (4 MB) to a client that read nothing"
					return nil
				}}, a6Opts{})
				st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
				if err != nil {
					seen[a6Err(err)]++
					continue
				}
				time.Sleep(100 * time.Millisecond) // the handler is blocked in Send
				cc.Close()
				h := receiveOr(hres, "handler still blocked 3s after Close")
				n, ok := 0, true
				var rerr error
				for {
					m, err := st.Recv()
					if err != nil {
						rerr = err
						break
					}
					ok = ok && m.Text == fmt.Sprint(n, big)
					n++
				}
				seen[fmt.Sprintf("whole messages in order: %v, then %s; %s", ok, a6Err(rerr), h)]++
				if n >= 40 {
					seen["client read all 40"]++
				}
			}
			t.Logf("%v", seen)
			for k := range seen {
				if k != `whole messages in order: true, then Canceled "grpc: the client connection is closing"; handler Send failed (Unavailable), ctx context canceled` &&
					k != `whole messages in order: true, then Canceled "grpc: the client connection is closing"; handler Send failed (Canceled), ctx context canceled` {
					t.Errorf("outcome %s", k)
				}
			}
		})
	}
}

// The handler sets header and trailer, then (having seen its context end
// after Close) calls SendHeader, Send and returns with a status: none of
// it reaches the client.
func TestAttack7CloseHandlerSendsHeaderAfter(t *testing.T) {
	a6Compare(t, a6Sides(false), 2, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		started, release, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var hs string
		cc := conn(&a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			defer close(ended)
			s.Recv()
			s.SetHeader(metadata.Pairs("h", "late"))
			s.SetTrailer(metadata.Pairs("t", "late"))
			close(started)
			<-release
			<-s.Context().Done()
			he := s.SendHeader(nil)
			se := s.Send(&echov1.EchoResponse{Text: "late"})
			hs = fmt.Sprintf("handler SendHeader %v, Send %v", status.Code(he), status.Code(se))
			return status.Error(5, "late status")
		}}, a6Opts{})
		st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
		if err != nil {
			return a6Err(err)
		}
		st.Send(&echov1.EchoRequest{})
		out := a6Wait(started, "handler start")
		cc.Close()
		close(release)
		out += a6Wait(ended, "handler end")
		h, herr := st.Header()
		_, rerr := st.Recv()
		tr := st.Trailer()
		return out + fmt.Sprintf("Header %v %s; Recv %s; Trailer %v; %s", mdString(h), a6Err(herr), a6Err(rerr), mdString(tr), hs)
	})
}

// Close racing the handler's SendHeader: Header() returns the header
// with no error, or nothing (with no error, or Canceled), as grpc-go
// does; then Recv fails with Canceled.
func TestAttack7CloseRacingSendHeader(t *testing.T) {
	for _, s := range a6Sides(false) {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range 25 {
				ready, release := make(chan struct{}), make(chan struct{})
				cc := s.conn(t, &a5Echo{expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					close(ready)
					<-release
					s.SendHeader(metadata.Pairs("h", "1"))
					<-s.Context().Done()
					return nil
				}}, a6Opts{})
				st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					seen["Expand "+a6Err(err)]++
					continue
				}
				<-ready
				go close(release)
				cc.Close()
				h, herr := st.Header()
				_, rerr := st.Recv()
				seen[fmt.Sprintf("Header %v %s; Recv %s", mdString(h), a6Err(herr), a6Err(rerr))]++
			}
			t.Logf("%v", seen)
			for k, n := range seen {
				if k != `Header {content-type=["application/grpc"] h=["1"]} nil; Recv Canceled "grpc: the client connection is closing"` &&
					k != `Header {} nil; Recv Canceled "grpc: the client connection is closing"` &&
					k != `Header  Canceled "grpc: the client connection is closing"; Recv Canceled "grpc: the client connection is closing"` {
					t.Errorf("outcome %s (%d times)", k, n)
				}
			}
		})
	}
}

// Calls of every kind made on a connection already closed.
func TestAttack7CallsAfterClose(t *testing.T) {
	a6Compare(t, a6Sides(true), 1, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		cs := &a5Rec{}
		ran := make(chan string, 8)
		cc := conn(&a5Echo{
			get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
				ran <- "get"
				return &echov1.EchoResponse{}, nil
			},
			expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				ran <- "expand"
				return nil
			},
			collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				ran <- "collect"
				return nil
			},
			update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				ran <- "update"
				return nil
			},
		}, a6Opts{cs: cs})
		c := echov1.NewEchoClient(cc)
		ctx := timeoutCtx(t)
		if _, err := c.Get(ctx, &echov1.EchoRequest{}); err != nil {
			return "warm: " + a6Err(err)
		}
		<-ran
		cs.settle()
		cs.mu.Lock()
		cs.events = nil
		cs.mu.Unlock()
		cerr := cc.Close()
		cerr2 := cc.Close()
		_, e1 := c.Get(ctx, &echov1.EchoRequest{})
		_, e2 := c.Expand(ctx, &echov1.EchoRequest{})
		_, e3 := c.Collect(ctx)
		_, e4 := c.Update(ctx)
		var e5 error
		if gc, ok := cc.(interface {
			NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error)
		}); ok {
			_, e5 = gc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/no.such/Method")
		}
		var handlers []string
		for len(ran) > 0 {
			handlers = append(handlers, <-ran)
		}
		time.Sleep(20 * time.Millisecond)
		cs.mu.Lock()
		events := fmt.Sprint(cs.events)
		cs.mu.Unlock()
		return fmt.Sprintf("Close %v, again %s; Get %s; Expand %s; Collect %s; Update %s; unknown %s; handlers ran %v; client stats %v",
			cerr, a6Err(cerr2), a6Err(e1), a6Err(e2), a6Err(e3), a6Err(e4), a6Err(e5), handlers, events)
	})
}

// A client stream whose handler answered (without waiting for the end of
// the requests) before the close: CloseAndRecv after Close.
func TestAttack7CloseClientStreamAnswered(t *testing.T) {
	a6Compare(t, a6Sides(false), 2, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		returned := make(chan struct{})
		cc := conn(&a5Echo{collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			defer close(returned)
			r, _ := s.Recv()
			s.SetTrailer(metadata.Pairs("t", "v"))
			return s.SendAndClose(&echov1.EchoResponse{Text: "got " + r.GetText()})
		}}, a6Opts{})
		st, err := echov1.NewEchoClient(cc).Collect(timeoutCtx(t))
		if err != nil {
			return a6Err(err)
		}
		st.Send(&echov1.EchoRequest{Text: "a"})
		out := a6Wait(returned, "handler return")
		time.Sleep(50 * time.Millisecond) // the response and status have arrived
		cc.Close()
		r, rerr := st.CloseAndRecv()
		h, herr := st.Header()
		serr := st.Send(&echov1.EchoRequest{Text: "b"})
		return out + fmt.Sprintf("CloseAndRecv %q %s; Header %v %s; Trailer %v; Send after %s",
			r.GetText(), a6Err(rerr), mdString(h), a6Err(herr), mdString(st.Trailer()), a6Err(serr))
	})
}

var _ sync.Mutex
