package localgrpc_test

// attack6: closing a client connection while streams are in flight, on
// inproc: (oracle: grpc-go over bufconn) and shm: (oracle: grpc-go over a
// unix socket, through the same localgrpc.Server).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// a6Opts are what a side's server and client are given.
type a6Opts struct {
	ss, cs     stats.Handler
	srvMaxRecv int
	dflt       []grpc.CallOption
}

type a6Side struct {
	name   string
	oracle string // the side whose outcome this one must match; "" for an oracle
	conn   func(t *testing.T, srv *a5Echo, o a6Opts) a5Conn
}

func a6Local(addr func(t *testing.T) string, modeOpts []localgrpc.ServerOption) func(t *testing.T, srv *a5Echo, o a6Opts) a5Conn {
	return func(t *testing.T, srv *a5Echo, o a6Opts) a5Conn {
		sopts := slices.Clone(modeOpts)
		var copts []localgrpc.ClientOption
		if o.ss != nil {
			sopts = append(sopts, localgrpc.WithServerStatsHandler(o.ss))
		}
		if o.srvMaxRecv != 0 {
			sopts = append(sopts, localgrpc.WithServerMaxRecvMsgSize(o.srvMaxRecv))
		}
		if o.cs != nil {
			copts = append(copts, localgrpc.WithClientStatsHandler(o.cs))
		}
		if o.dflt != nil {
			copts = append(copts, localgrpc.WithDefaultCallOptions(o.dflt...))
		}
		s := localgrpc.NewServer(sopts...)
		echov1.RegisterEchoServer(s, srv)
		a := addr(t)
		serve(t, s, a)
		cc, err := localgrpc.NewClient(a, copts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	}
}

func a6Bufconn(t *testing.T, srv *a5Echo, o a6Opts) a5Conn {
	var sopts []grpc.ServerOption
	var dopts []grpc.DialOption
	if o.ss != nil {
		sopts = append(sopts, grpc.StatsHandler(o.ss))
	}
	if o.srvMaxRecv != 0 {
		sopts = append(sopts, grpc.MaxRecvMsgSize(o.srvMaxRecv))
	}
	if o.cs != nil {
		dopts = append(dopts, grpc.WithStatsHandler(o.cs))
	}
	if o.dflt != nil {
		dopts = append(dopts, grpc.WithDefaultCallOptions(o.dflt...))
	}
	return servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, sopts, dopts...)
}

// a6Sides: grpc-go over bufconn, inproc in each mode (inline ones only
// if inline), grpc-go over unix through localgrpc, and shm:.
func a6Sides(inline bool) []a6Side {
	out := []a6Side{{"grpc-go-bufconn", "", a6Bufconn}}
	for _, m := range inprocModes {
		if !inline && strings.Contains(m.name, "inline") {
			continue
		}
		out = append(out, a6Side{"inproc/" + m.name, "grpc-go-bufconn", a6Local(func(t *testing.T) string { return "inproc:" + uniqueName(t) }, m.opts)})
	}
	out = append(out,
		a6Side{"unix", "", a6Local(func(t *testing.T) string { return "unix:" + socketPath(t) }, nil)},
		a6Side{"shm", "unix", a6Local(func(t *testing.T) string { return "shm:@" + uniqueName(t) }, nil)})
	return out
}

// a6Compare runs run on every side runs times and compares the sets of
// outcomes with each side's oracle's.
func a6Compare(t *testing.T, sides []a6Side, runs int, run func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string) {
	got := map[string]string{}
	for _, s := range sides {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range runs {
				seen[run(t, func(e *a5Echo, o a6Opts) a5Conn { return s.conn(t, e, o) })]++
			}
			got[s.name] = fmt.Sprint(seen)
			if s.oracle == "" {
				t.Logf("%s: %s", s.name, got[s.name])
				return
			}
			if got[s.name] != got[s.oracle] {
				t.Errorf("\n%s: %s\n%s (oracle): %s", s.name, got[s.name], s.oracle, got[s.oracle])
			}
		})
	}
}

func a6Err(err error) string {
	if err == nil {
		return "nil"
	}
	if errors.Is(err, io.EOF) {
		return "EOF"
	}
	return fmt.Sprintf("%v %q", status.Code(err), status.Convert(err).Message())
}

func a6Wait(c <-chan struct{}, what string) string {
	select {
	case <-c:
		return ""
	case <-time.After(5 * time.Second):
		return what + " did not happen in 5s; "
	}
}

// Header and Trailer of a server stream after Close: the header had
// arrived (one message was read) and the handler waits on its context.
func TestAttack6CloseHeaderTrailerAfterClose(t *testing.T) {
	for _, sendHeader := range []bool{true, false} {
		t.Run(fmt.Sprintf("header-sent=%v", sendHeader), func(t *testing.T) {
			a6Compare(t, a6Sides(false), 3, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
				ended, waiting := make(chan struct{}), make(chan struct{})
				cc := conn(&a5Echo{expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					s.SetHeader(metadata.Pairs("h", "1"))
					s.SetTrailer(metadata.Pairs("t", "1"))
					if sendHeader {
						s.Send(&echov1.EchoResponse{Text: "a"})
					}
					close(waiting)
					<-s.Context().Done()
					close(ended)
					return nil
				}}, a6Opts{})
				st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					return err.Error()
				}
				out := ""
				if sendHeader {
					if _, err := st.Recv(); err != nil {
						return "first Recv: " + err.Error()
					}
				}
				out += a6Wait(waiting, "handler start")
				cc.Close()
				out += a6Wait(ended, "handler ctx end")
				h, herr := st.Header()
				tr := st.Trailer()
				_, rerr := st.Recv()
				h2, herr2 := st.Header()
				return out + fmt.Sprintf("Header: %v %s; Trailer: %v; Recv: %s; Header again: %v %s",
					mdString(h), a6Err(herr), mdString(tr), a6Err(rerr), mdString(h2), a6Err(herr2))
			})
		})
	}
}

// Send, CloseSend and Recv on a bidi stream, and Send and CloseAndRecv on
// a client stream, once the connection is closed.
func TestAttack6CloseThenSend(t *testing.T) {
	t.Run("bidi", func(t *testing.T) {
		a6Compare(t, a6Sides(false), 3, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
			ended := make(chan struct{})
			var hctx string
			cc := conn(&a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				r, err := s.Recv()
				if err != nil {
					return err
				}
				s.Send(&echov1.EchoResponse{Text: r.Text})
				_, rerr := s.Recv()
				serr := s.Send(&echov1.EchoResponse{Text: "late"})
				hctx = fmt.Sprintf("handler Recv: %s, Send: %s, ctx: %v", a6Err(rerr), a6Err(serr), s.Context().Err())
				close(ended)
				return nil
			}}, a6Opts{})
			st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
			if err != nil {
				return err.Error()
			}
			st.Send(&echov1.EchoRequest{Text: "p"})
			if _, err := st.Recv(); err != nil {
				return "Recv: " + err.Error()
			}
			cc.Close()
			out := a6Wait(ended, "handler end")
			serr := st.Send(&echov1.EchoRequest{Text: "q"})
			cerr := st.CloseSend()
			_, rerr := st.Recv()
			return out + fmt.Sprintf("Send: %s; CloseSend: %s; Recv: %s; %s", a6Err(serr), a6Err(cerr), a6Err(rerr), hctx)
		})
	})
	t.Run("client-stream", func(t *testing.T) {
		a6Compare(t, a6Sides(false), 3, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
			ended, got := make(chan struct{}), make(chan struct{})
			var hctx string
			cc := conn(&a5Echo{collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				s.Recv()
				close(got)
				_, rerr := s.Recv()
				hctx = fmt.Sprintf("handler Recv: %s, ctx: %v", a6Err(rerr), s.Context().Err())
				close(ended)
				return s.SendAndClose(&echov1.EchoResponse{Text: "x"})
			}}, a6Opts{})
			st, err := echov1.NewEchoClient(cc).Collect(timeoutCtx(t))
			if err != nil {
				return err.Error()
			}
			st.Send(&echov1.EchoRequest{Text: "p"})
			out := a6Wait(got, "handler Recv")
			cc.Close()
			out += a6Wait(ended, "handler end")
			serr := st.Send(&echov1.EchoRequest{Text: "q"})
			r, rerr := st.CloseAndRecv()
			return out + fmt.Sprintf("Send: %s; CloseAndRecv: %q %s; %s", a6Err(serr), r.GetText(), a6Err(rerr), hctx)
		})
	})
}

// The handler has returned (status sent) before Close: what had arrived,
// status included, is still read.
func TestAttack6CloseAfterHandlerReturned(t *testing.T) {
	a6Compare(t, a6Sides(false), 3, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		returned := make(chan struct{})
		cc := conn(&a5Echo{expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			defer close(returned)
			for i := range 3 {
				s.Send(&echov1.EchoResponse{Text: fmt.Sprint(i)})
			}
			s.SetTrailer(metadata.Pairs("t", "v"))
			return status.Error(5, "gone")
		}}, a6Opts{})
		st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			return err.Error()
		}
		out := a6Wait(returned, "handler return")
		time.Sleep(50 * time.Millisecond) // the status has arrived
		cc.Close()
		var got []string
		for {
			m, err := st.Recv()
			if err != nil {
				got = append(got, a6Err(err))
				break
			}
			got = append(got, m.Text)
		}
		return out + strings.Join(got, ", ") + " trailer " + mdString(st.Trailer())
	})
}

// Many goroutines blocked in Recv on streams of one connection when it
// closes: each gets Canceled with grpc-go's message.
func TestAttack6CloseConcurrentRecvMessages(t *testing.T) {
	a6Compare(t, a6Sides(false), 2, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		const n = 8
		var started sync.WaitGroup
		started.Add(2 * n)
		cc := conn(&a5Echo{
			expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				s.Send(&echov1.EchoResponse{Text: "a"})
				started.Done()
				<-s.Context().Done()
				return nil
			},
			update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				s.Recv()
				s.Send(&echov1.EchoResponse{Text: "a"})
				started.Done()
				<-s.Context().Done()
				return nil
			},
		}, a6Opts{})
		c := echov1.NewEchoClient(cc)
		ctx := timeoutCtx(t)
		res := make(chan string, 4*n)
		var blocked sync.WaitGroup
		blocked.Add(2 * n)
		for range n {
			go func() {
				s, err := c.Expand(ctx, &echov1.EchoRequest{})
				if err != nil {
					blocked.Done()
					res <- "Expand: " + a6Err(err)
					return
				}
				s.Recv()
				blocked.Done()
				_, err = s.Recv()
				res <- "server-stream Recv: " + a6Err(err)
				_, err = s.Recv()
				res <- "server-stream Recv again: " + a6Err(err)
			}()
			go func() {
				s, err := c.Update(ctx)
				if err != nil {
					blocked.Done()
					res <- "Update: " + a6Err(err)
					return
				}
				s.Send(&echov1.EchoRequest{})
				s.Recv()
				blocked.Done()
				_, err = s.Recv()
				res <- "bidi Recv: " + a6Err(err)
				res <- "bidi Send after: " + a6Err(s.Send(&echov1.EchoRequest{}))
			}()
		}
		started.Wait()
		blocked.Wait()
		time.Sleep(20 * time.Millisecond) // all are in their second Recv
		cc.Close()
		seen := map[string]int{}
		for range 4 * n {
			select {
			case r := <-res:
				seen[r]++
			case <-time.After(5 * time.Second):
				return fmt.Sprint("blocked 5s after Close: ", seen)
			}
		}
		return fmt.Sprint(seen)
	})
}

// Close racing with a unary handler's return: the call either succeeds
// or fails with Canceled, nothing else, and the server's stats End
// agrees with what the handler returned or the cancel.
func TestAttack6CloseRacingHandlerReturn(t *testing.T) {
	for _, s := range a6Sides(true) {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range 30 {
				release := make(chan struct{})
				cc := s.conn(t, &a5Echo{get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
					<-release
					return &echov1.EchoResponse{Text: r.Text}, nil
				}}, a6Opts{})
				res := make(chan string, 1)
				go func() {
					r, err := echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
					res <- fmt.Sprintf("%q %s", r.GetText(), a6Err(err))
				}()
				time.Sleep(2 * time.Millisecond)
				go close(release)
				cc.Close()
				select {
				case r := <-res:
					seen[r]++
				case <-time.After(5 * time.Second):
					seen["hung"]++
				}
			}
			t.Logf("%v", seen)
			for k := range seen {
				if k != `"x" nil` && k != `"" Canceled "grpc: the client connection is closing"` {
					t.Errorf("outcome %s (%d times), want OK or Canceled", k, seen[k])
				}
			}
		})
	}
}

// A 2 MiB message received in part when the connection closes.
func TestAttack6CloseLargeMessages(t *testing.T) {
	a6Compare(t, a6Sides(false), 3, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		big := strings.Repeat("b", 2<<20)
		ended := make(chan struct{})
		var hs string
		cc := conn(&a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			r, err := s.Recv()
			if err != nil {
				return err
			}
			serr := s.Send(&echov1.EchoResponse{Text: r.Text})
			<-s.Context().Done()
			_, rerr := s.Recv()
			hs = fmt.Sprintf("handler Send: %s, Recv after: %s", a6Err(serr), a6Err(rerr))
			close(ended)
			return nil
		}}, a6Opts{})
		st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
		if err != nil {
			return err.Error()
		}
		if err := st.Send(&echov1.EchoRequest{Text: big}); err != nil {
			return "Send: " + a6Err(err)
		}
		m, err := st.Recv()
		if err != nil || m.Text != big {
			return "Recv: " + a6Err(err)
		}
		cc.Close()
		out := a6Wait(ended, "handler end")
		_, rerr := st.Recv()
		return out + fmt.Sprintf("Recv: %s; %s", a6Err(rerr), hs)
	})
}

// Send after CloseSend on a stream whose connection was closed: grpc-go
// checks CloseSend first and returns Internal "SendMsg called after
// CloseSend", as it does on an open connection.
func TestAttack6CloseThenSendAfterCloseSend(t *testing.T) {
	a6Compare(t, a6Sides(false), 2, func(t *testing.T, conn func(*a5Echo, a6Opts) a5Conn) string {
		ended := make(chan struct{})
		cc := conn(&a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			defer close(ended)
			s.Recv()
			s.Send(&echov1.EchoResponse{})
			<-s.Context().Done()
			return nil
		}}, a6Opts{})
		st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
		if err != nil {
			return err.Error()
		}
		st.Send(&echov1.EchoRequest{Text: "p"})
		if _, err := st.Recv(); err != nil {
			return "Recv: " + err.Error()
		}
		cc.Close()
		out := a6Wait(ended, "handler end")
		cerr := st.CloseSend()
		serr := st.Send(&echov1.EchoRequest{Text: "r"})
		return out + fmt.Sprintf("CloseSend: %s; Send after it: %s", a6Err(cerr), a6Err(serr))
	})
}
