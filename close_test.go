package localgrpc_test

// attack5: closing a client while calls are in flight, compared with
// grpc-go's ClientConn.Close over bufconn (the oracle).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

type a5Echo struct {
	echov1.UnimplementedEchoServer
	expand  func(*echov1.EchoRequest, grpc.ServerStreamingServer[echov1.EchoResponse]) error
	collect func(grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error
	update  func(grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error
	get     func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error)
}

func (e *a5Echo) Get(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return e.get(ctx, r)
}
func (e *a5Echo) Expand(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
	return e.expand(r, s)
}
func (e *a5Echo) Collect(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	return e.collect(s)
}
func (e *a5Echo) Update(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	return e.update(s)
}

type a5Conn interface {
	grpc.ClientConnInterface
	Close() error
}

// a5Sides are the oracle (grpc-go over bufconn) and localgrpc's
// in-process client in every mode.
func a5Sides(t *testing.T) []struct {
	name string
	conn func(t *testing.T, srv *a5Echo) a5Conn
} {
	type side = struct {
		name string
		conn func(t *testing.T, srv *a5Echo) a5Conn
	}
	out := []side{{"grpc-go", func(t *testing.T, srv *a5Echo) a5Conn {
		return servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, nil)
	}}}
	for _, m := range inprocModes {
		out = append(out, side{"inproc/" + m.name, func(t *testing.T, srv *a5Echo) a5Conn {
			s := localgrpc.NewServer(m.opts...)
			echov1.RegisterEchoServer(s, srv)
			addr := "inproc:" + uniqueName(t)
			serve(t, s, addr)
			cc, err := localgrpc.NewClient(addr)
			if err != nil {
				t.Fatal(err)
			}
			return cc
		}})
	}
	return out
}

func a5Compare(t *testing.T, runs int, run func(t *testing.T, conn func(*a5Echo) a5Conn) string) {
	a5CompareSides(t, a5Sides(t), runs, run)
}

// a5NotInline leaves out the Inline modes, whose stream handlers run only
// while their caller waits for them (documented).
func a5NotInline(t *testing.T) []struct {
	name string
	conn func(t *testing.T, srv *a5Echo) a5Conn
} {
	sides := a5Sides(t)
	out := sides[:0]
	for _, s := range sides {
		if !strings.Contains(s.name, "inline") {
			out = append(out, s)
		}
	}
	return out
}

func a5CompareSides(t *testing.T, sides []struct {
	name string
	conn func(t *testing.T, srv *a5Echo) a5Conn
}, runs int, run func(t *testing.T, conn func(*a5Echo) a5Conn) string) {
	want := ""
	for i, s := range sides {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range runs {
				seen[run(t, func(e *a5Echo) a5Conn { return s.conn(t, e) })]++
			}
			got := fmt.Sprint(seen)
			if i == 0 {
				want = got
				t.Logf("grpc-go: %s", got)
				return
			}
			if got != want {
				t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
			}
		})
	}
}

// Messages the client's stream has received, and not yet read, when the
// connection closes: grpc-go's Recv still returns them, then Canceled.
func TestAttack5CloseWithReceivedMessagesUnread(t *testing.T) {
	a5CompareSides(t, a5NotInline(t), 5, func(t *testing.T, conn func(*a5Echo) a5Conn) string {
		sent, ended := make(chan struct{}), make(chan struct{})
		cc := conn(&a5Echo{expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			for i := range 3 {
				if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint(i)}); err != nil {
					return err
				}
			}
			close(sent)
			<-s.Context().Done()
			close(ended)
			return nil
		}})
		st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			return err.Error()
		}
		if _, err := st.Recv(); err != nil {
			return "first Recv: " + err.Error()
		}
		select {
		case <-sent:
		case <-time.After(5 * time.Second):
			return "the handler did not send its 3 messages"
		}
		time.Sleep(50 * time.Millisecond) // what was sent has arrived
		cc.Close()
		// The close has reached the call (its handler's context ended)
		// before the client receives again.
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			return "the handler's context did not end after Close"
		}
		var got []string
		for {
			m, err := st.Recv()
			if err != nil {
				got = append(got, fmt.Sprintf("%v %q", status.Code(err), status.Convert(err).Message()))
				break
			}
			got = append(got, m.Text)
		}
		return strings.Join(got, ", ")
	})
}

// A client blocked in Send, its handler not reading, when the
// connection closes: what Send returns, then what Recv does.
func TestAttack5CloseWhileSendBlocked(t *testing.T) {
	a5Compare(t, 3, func(t *testing.T, conn func(*a5Echo) a5Conn) string {
		ctxEnded := make(chan error, 1)
		cc := conn(&a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			<-s.Context().Done()
			ctxEnded <- s.Context().Err()
			return nil
		}})
		st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
		if err != nil {
			return err.Error()
		}
		big := &echov1.EchoRequest{Text: strings.Repeat("x", 32<<10)}
		sendErr := make(chan error, 1)
		go func() {
			for {
				if err := st.Send(big); err != nil {
					sendErr <- err
					return
				}
			}
		}()
		time.Sleep(100 * time.Millisecond) // Send blocks: the window is full
		cc.Close()
		var serr error
		select {
		case serr = <-sendErr:
		case <-time.After(5 * time.Second):
			return "Send still blocked 5s after Close"
		}
		_, rerr := st.Recv()
		var hctx error
		select {
		case hctx = <-ctxEnded:
		case <-time.After(5 * time.Second):
			hctx = fmt.Errorf("handler's context not ended")
		}
		return fmt.Sprintf("Send: %v; Recv: %v %q; handler ctx: %v", serr, status.Code(rerr), status.Convert(rerr).Message(), hctx)
	})
}

// A client blocked in CloseAndRecv when the connection closes.
func TestAttack5CloseInCloseAndRecv(t *testing.T) {
	a5Compare(t, 3, func(t *testing.T, conn func(*a5Echo) a5Conn) string {
		held := make(chan struct{})
		cc := conn(&a5Echo{collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			for {
				if _, err := s.Recv(); err != nil {
					break
				}
			}
			close(held)
			<-s.Context().Done()
			return s.SendAndClose(&echov1.EchoResponse{Text: "late"})
		}})
		st, err := echov1.NewEchoClient(cc).Collect(timeoutCtx(t))
		if err != nil {
			return err.Error()
		}
		st.Send(&echov1.EchoRequest{Text: "a"})
		got := make(chan error, 1)
		go func() { _, err := st.CloseAndRecv(); got <- err }()
		<-held
		time.Sleep(20 * time.Millisecond)
		cc.Close()
		err = <-got
		return fmt.Sprintf("CloseAndRecv: %v %q", status.Code(err), status.Convert(err).Message())
	})
}

// Many calls of every kind in flight at Close: each ends at once with
// Canceled, every handler's context ends.
func TestAttack5CloseManyInFlight(t *testing.T) {
	a5Compare(t, 3, func(t *testing.T, conn func(*a5Echo) a5Conn) string {
		const n = 20
		var started, ended sync.WaitGroup
		started.Add(4 * n)
		ended.Add(4 * n)
		hold := func(ctx context.Context) { started.Done(); <-ctx.Done(); ended.Done() }
		cc := conn(&a5Echo{
			get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
				hold(ctx)
				return &echov1.EchoResponse{}, nil
			},
			expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				hold(s.Context())
				return nil
			},
			collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				hold(s.Context())
				return nil
			},
			update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				hold(s.Context())
				return nil
			},
		})
		c := echov1.NewEchoClient(cc)
		ctx := timeoutCtx(t)
		codes := make(chan string, 4*n)
		code := func(err error) { codes <- fmt.Sprint(status.Code(err)) }
		for range n {
			go func() { _, err := c.Get(ctx, &echov1.EchoRequest{}); code(err) }()
			go func() {
				s, err := c.Expand(ctx, &echov1.EchoRequest{})
				if err == nil {
					_, err = s.Recv()
				}
				code(err)
			}()
			go func() {
				s, err := c.Collect(ctx)
				if err == nil {
					_, err = s.CloseAndRecv()
				}
				code(err)
			}()
			go func() {
				s, err := c.Update(ctx)
				if err == nil {
					s.Send(&echov1.EchoRequest{})
					_, err = s.Recv()
				}
				code(err)
			}()
		}
		started.Wait()
		cc.Close()
		seen := map[string]int{}
		deadline := time.After(5 * time.Second)
		for range 4 * n {
			select {
			case c := <-codes:
				seen[c]++
			case <-deadline:
				return fmt.Sprint("calls still in flight 5s after Close: ", seen)
			}
		}
		done := make(chan struct{})
		go func() { ended.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			return fmt.Sprint(seen, " handlers' contexts not all ended")
		}
		return fmt.Sprint(seen)
	})
}

var _ = io.EOF
var _ = inproc.Clone

// attack6: closing a client connection while streams are in flight, on
// inproc: (oracle: grpc-go over bufconn) and shm: (oracle: grpc-go over a
// unix socket, through the same localgrpc.Server).

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

// attack7: closing a client connection (inproc: against grpc-go over
// bufconn, shm: against grpc-go over a unix socket): many messages queued
// on a bidi stream whose header was never read, messages over the flow
// control window, a handler that sends its header and trailer only after
// the close, Close racing SendHeader, calls made after Close, a client
// stream whose response had arrived before the close.

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

// Messages kept for a client whose connection closed, received by two
// goroutines at once (a misuse the receiver's guard turns away): each
// message reaches one of them whole, once, and the copies they release go
// to the stream's Spare one giver at a time. Two givers at the same moment
// would be a race on the Spare, which -race reports only when they meet:
// a narrow window, which five runs on the old code did not hit.
func TestCloseKeptReceivedConcurrently(t *testing.T) {
	const count = 50 // under the 64-message window: all are queued before the close
	sent := make(chan struct{})
	cc := a6Local(func(t *testing.T) string { return "inproc:" + uniqueName(t) }, inprocModes[0].opts)(t, &a5Echo{
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			for i := range count {
				if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint(i)}); err != nil {
					return err
				}
			}
			close(sent)
			<-s.Context().Done()
			return nil
		}}, a6Opts{})
	st, err := echov1.NewEchoClient(cc).Update(timeoutCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	receive(t, sent, "the handler's sends")
	cc.Close()
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				m, err := st.Recv()
				if err != nil {
					return
				}
				mu.Lock()
				if seen[m.Text] {
					t.Errorf("received %q twice", m.Text)
				}
				seen[m.Text] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for text := range seen {
		if n, err := strconv.Atoi(text); err != nil || n < 0 || n >= count {
			t.Errorf("received %q, which the handler did not send", text)
		}
	}
}
