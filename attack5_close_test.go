package localgrpc_test

// attack5: closing a client while calls are in flight, compared with
// grpc-go's ClientConn.Close over bufconn (the oracle).

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
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
