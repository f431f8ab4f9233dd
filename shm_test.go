package localgrpc_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/credentials/local"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// TestShmRefusesWhatItCannotApply: shm: carries no transport credentials
// and is not grpc-go's, so a server or client configured with either
// refuses the address rather than skip what was configured.
func TestShmRefusesWhatItCannotApply(t *testing.T) {
	for name, opts := range map[string][]localgrpc.ServerOption{
		"transport-credentials": {localgrpc.WithTransportCredentials(local.NewCredentials())},
		"grpc-server-options":   {localgrpc.WithGRPCServerOptions(grpc.MaxHeaderListSize(4096))},
	} {
		srv := newEchoServer(opts...)
		if err := srv.Listen("shm:@" + uniqueName(t)); err == nil {
			t.Errorf("%s: Listen took a shm: address", name)
		}
		srv.Stop()
	}
	for name, opt := range map[string]localgrpc.ClientOption{
		"transport-credentials": localgrpc.WithClientTransportCredentials(insecure.NewCredentials()),
		"grpc-dial-options":     localgrpc.WithGRPCDialOptions(grpc.WithUserAgent("x")),
	} {
		if cc, err := localgrpc.NewClient("shm:@"+uniqueName(t), opt); err == nil {
			cc.Close()
			t.Errorf("%s: NewClient took a shm: address", name)
		}
	}
}

// TestGRPCClientOfShmSocket: a grpc-go client that dials a shm: socket
// fails at once with Unavailable, and its error says what the socket
// is, rather than waiting for an HTTP/2 server that never answers.
func TestGRPCClientOfShmSocket(t *testing.T) {
	path := socketPath(t)
	serve(t, newEchoServer(), "shm:"+path)
	cc, err := grpc.NewClient("unix:"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{Text: "x"})
	t.Logf("after %v: %v", time.Since(start), err)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shm:") {
		t.Errorf("a grpc-go client of a shm: socket: %v, want Unavailable saying it is a shm: socket", err)
	}
}

// TestShmClientOfGRPCSocket: NewClient("shm:...") of a socket grpc-go
// serves fails the call with Unavailable, saying why.
func TestShmClientOfGRPCSocket(t *testing.T) {
	path := socketPath(t)
	serve(t, newEchoServer(), "unix:"+path)
	c := dial(t, "shm:"+path)
	_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"})
	t.Log(err)
	if status.Code(err) != codes.Unavailable {
		t.Errorf("a shm: client of a grpc-go socket: %v, want Unavailable", err)
	}
}

// sleepyEcho's Get sleeps before it answers, once it said it began.
type sleepyEcho struct {
	echov1.UnimplementedEchoServer
	began chan struct{}
}

func (e sleepyEcho) Get(_ context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	e.began <- struct{}{}
	time.Sleep(200 * time.Millisecond)
	return &echov1.EchoResponse{Text: r.GetText()}, nil
}

// TestGracefulStopDeliversCallsInFlight: a GracefulStop while a unary
// call's handler runs lets its response reach the client, over shm: as
// over unix:, every time.
func TestGracefulStopDeliversCallsInFlight(t *testing.T) {
	for _, kind := range []string{"unix", "shm"} {
		for i := range 5 {
			srv := localgrpc.NewServer()
			e := sleepyEcho{began: make(chan struct{}, 1)}
			echov1.RegisterEchoServer(srv, e)
			addr := map[string]string{"unix": "unix:" + socketPath(t), "shm": "shm:@" + uniqueName(t)}[kind]
			serve(t, srv, addr)
			c := dial(t, addr)
			go func() {
				<-e.began
				srv.GracefulStop()
			}()
			r, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "drained"})
			if err != nil || r.GetText() != "drained" {
				t.Errorf("%s, try %d: the call in flight at GracefulStop: %q, %v", kind, i, r.GetText(), err)
			}
		}
	}
}

// endingCollect's Collect says when it begins, and when it returns.
type endingCollect struct {
	echov1.UnimplementedEchoServer
	began chan struct{}
	ended chan error
}

func (e endingCollect) Collect(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	e.began <- struct{}{}
	for {
		if _, err := s.Recv(); err != nil {
			e.ended <- err
			return err
		}
	}
}

// TestClientSideFinishEndsHandler: a client stream that ends on the
// client's side alone (a Send after CloseSend) has its handler run and
// end, over shm: as over unix:, where grpc-go runs a stream's handler once
// its headers came, whatever follows them.
func TestClientSideFinishEndsHandler(t *testing.T) {
	for _, kind := range []string{"unix", "shm"} {
		srv := localgrpc.NewServer()
		e := endingCollect{began: make(chan struct{}, 1), ended: make(chan error, 1)}
		echov1.RegisterEchoServer(srv, e)
		addr := map[string]string{"unix": "unix:" + socketPath(t), "shm": "shm:@" + uniqueName(t)}[kind]
		serve(t, srv, addr)
		c := dial(t, addr)
		for i := range 20 {
			s, err := c.Collect(timeoutCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			s.Send(&echov1.EchoRequest{Text: "a"})
			s.CloseSend()
			if err := s.Send(&echov1.EchoRequest{Text: "b"}); status.Code(err) != codes.Internal {
				t.Errorf("%s: Send after CloseSend: %v, want Internal", kind, err)
			}
			select {
			case <-e.began:
			case <-time.After(waitLimit):
				t.Fatalf("%s, try %d: the handler did not run", kind, i)
			}
			select {
			case <-e.ended:
			case <-time.After(waitLimit):
				t.Fatalf("%s, try %d: the handler still waits %v after its client's stream ended", kind, i, waitLimit)
			}
		}
	}
}

// attack6: shm: against grpc-go over a unix socket served by the same
// kind of localgrpc.Server: GracefulStop with calls in flight and calls
// racing it, Stop during GracefulStop, messages at and over the size
// limits, a request that fails to marshal.

var a6ShmSides = []struct {
	name string
	addr func(t *testing.T) string
}{
	{"unix", func(t *testing.T) string { return "unix:" + socketPath(t) }},
	{"shm", func(t *testing.T) string { return "shm:@" + uniqueName(t) }},
}

// a6ShmCompare runs run over unix (the oracle) then shm, runs times
// each, and compares the sets of outcomes.
func a6ShmCompare(t *testing.T, runs int, run func(t *testing.T, addr string) string) {
	var want string
	for i, s := range a6ShmSides {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range runs {
				seen[run(t, s.addr(t))]++
			}
			got := fmt.Sprint(seen)
			if i == 0 {
				want = got
				t.Logf("unix: %s", got)
				return
			}
			if got != want {
				t.Errorf("\nshm:  %s\nunix: %s", got, want)
			}
		})
	}
}

// a6Server serves srv on addr with opts; the returned channel has
// Serve's result.
func a6Server(t *testing.T, addr string, srv *a5Echo, opts ...localgrpc.ServerOption) (*localgrpc.Server, <-chan error) {
	s := localgrpc.NewServer(opts...)
	echov1.RegisterEchoServer(s, srv)
	if err := s.Listen(addr); err != nil {
		t.Fatal(err)
	}
	done, ended := make(chan error, 1), make(chan struct{})
	go func() { done <- s.Serve(context.Background()); close(ended) }()
	t.Cleanup(func() { s.Stop(); <-ended })
	return s, done
}

func a6Client(t *testing.T, addr string, opts ...localgrpc.ClientOption) echov1.EchoClient {
	cc, err := localgrpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return echov1.NewEchoClient(cc)
}

// a6Returns says whether f returns within d.
func a6Returns(f func(), d time.Duration) (<-chan struct{}, func() bool) {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	return done, func() bool {
		select {
		case <-done:
			return true
		case <-time.After(d):
			return false
		}
	}
}

// A unary call and a server stream in flight at GracefulStop finish; a
// call made on the same connection once the drain began is refused;
// GracefulStop returns once the handlers do, then Serve.
func TestAttack6ShmGracefulStopInFlight(t *testing.T) {
	a6ShmCompare(t, 2, func(t *testing.T, addr string) string {
		release := make(chan struct{})
		var started sync.WaitGroup
		started.Add(2)
		srv, served := a6Server(t, addr, &a5Echo{
			get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
				if r.Text == "quick" {
					return &echov1.EchoResponse{Text: "quick"}, nil
				}
				started.Done()
				<-release
				return &echov1.EchoResponse{Text: "served"}, nil
			},
			expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				started.Done()
				<-release
				for i := range 50 {
					if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint(i)}); err != nil {
						return err
					}
				}
				return nil
			},
		})
		c := a6Client(t, addr)
		ctx := timeoutCtx(t)
		unary := make(chan string, 1)
		go func() {
			r, err := c.Get(ctx, &echov1.EchoRequest{})
			unary <- fmt.Sprintf("%q %s", r.GetText(), a6Err(err))
		}()
		stream := make(chan string, 1)
		go func() {
			s, err := c.Expand(ctx, &echov1.EchoRequest{})
			if err != nil {
				stream <- a6Err(err)
				return
			}
			n := 0
			for {
				_, err := s.Recv()
				if err != nil {
					stream <- fmt.Sprintf("%d messages, %s", n, a6Err(err))
					return
				}
				n++
			}
		}()
		started.Wait()
		gsDone, gsWait := a6Returns(srv.GracefulStop, 5*time.Second)
		time.Sleep(100 * time.Millisecond) // the drain has reached the client
		_, lateErr := c.Get(ctx, &echov1.EchoRequest{Text: "quick"})
		select {
		case <-gsDone:
			return "GracefulStop returned with handlers running"
		default:
		}
		close(release)
		out := fmt.Sprintf("late call: %v; unary: %s; stream: %s", status.Code(lateErr), <-unary, <-stream)
		if !gsWait() {
			return out + "; GracefulStop hung"
		}
		out += serveOutcome(served)
		return out
	})
}

// Calls fired just before GracefulStop on a warm connection: each is
// served or refused with Unavailable, and GracefulStop returns.
func TestAttack6ShmGracefulStopRacingCalls(t *testing.T) {
	for _, s := range a6ShmSides {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range 20 {
				addr := s.addr(t)
				srv, _ := a6Server(t, addr, &a5Echo{get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
					time.Sleep(time.Millisecond)
					return &echov1.EchoResponse{Text: r.Text}, nil
				}})
				c := a6Client(t, addr)
				ctx := timeoutCtx(t)
				if _, err := c.Get(ctx, &echov1.EchoRequest{Text: "warm"}); err != nil {
					t.Fatal(err)
				}
				res := make(chan string, 10)
				for range 10 {
					go func() {
						r, err := c.Get(ctx, &echov1.EchoRequest{Text: "x"})
						res <- fmt.Sprintf("%q %v", r.GetText(), status.Code(err))
					}()
				}
				stopAndCount(srv.GracefulStop, res, 10, seen)
			}
			t.Logf("%v", seen)
			for k, n := range seen {
				if k != `"x" OK` && k != `"" Unavailable` {
					t.Errorf("%s: %d times", k, n)
				}
			}
		})
	}
}

// Stop during GracefulStop: the calls in flight end, the handler sees
// its context end, GracefulStop returns.
func TestAttack6ShmStopDuringGracefulStop(t *testing.T) {
	for _, honour := range []bool{true, false} {
		t.Run(fmt.Sprintf("handler-honours-ctx=%v", honour), func(t *testing.T) {
			a6ShmCompare(t, 3, func(t *testing.T, addr string) string {
				started, release, hdone := make(chan struct{}), make(chan struct{}), make(chan string, 2)
				srv, served := a6Server(t, addr, &a5Echo{
					update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
						s.Recv()
						s.Send(&echov1.EchoResponse{Text: "a"})
						close(started)
						if honour {
							<-s.Context().Done()
						} else {
							<-release
						}
						err := s.Send(&echov1.EchoResponse{Text: "b"})
						hdone <- fmt.Sprintf("handler: ctx %v, Send %s", s.Context().Err(), a6Err(err))
						return nil
					},
				})
				c := a6Client(t, addr)
				st, err := c.Update(timeoutCtx(t))
				if err != nil {
					return a6Err(err)
				}
				st.Send(&echov1.EchoRequest{})
				st.Recv()
				<-started
				gsDone, gsWait := a6Returns(srv.GracefulStop, 5*time.Second)
				time.Sleep(50 * time.Millisecond)
				srv.Stop()
				_, rerr := st.Recv()
				// The message is the transport's own: the code is what
				// must be the same.
				out := fmt.Sprintf("Recv: %v", status.Code(rerr))
				if !honour {
					// Does GracefulStop wait for the handler that runs on?
					select {
					case <-gsDone:
						out += "; GracefulStop returned before the handler"
					case <-time.After(100 * time.Millisecond):
						out += "; GracefulStop waits for the handler"
					}
					close(release)
				}
				out += "; " + <-hdone
				if !gsWait() {
					return out + "; GracefulStop hung"
				}
				out += serveOutcome(served)
				return out
			})
		})
	}
}

// a6Text is a text whose EchoRequest or EchoResponse encodes to n bytes.
func a6Text(n int) string {
	l := n - 2
	for ; 1+varintLen(l)+l != n; l-- {
	}
	return strings.Repeat("m", l)
}

func varintLen(v int) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// Messages at and one byte over the limits, on every kind of call.
func TestAttack6ShmLimitEdges(t *testing.T) {
	const srvLimit, cliLimit = 1 << 20, 8 << 20
	type tc struct {
		name string
		call func(ctx context.Context, c echov1.EchoClient) string
		// reports: the handler runs and reports, if slowly (see expand).
		reports bool
	}
	recvAll := func(s interface {
		Recv() (*echov1.EchoResponse, error)
	}) string {
		var sizes []string
		for {
			m, err := s.Recv()
			if err != nil {
				return fmt.Sprintf("%v %s", sizes, a6Err(err))
			}
			sizes = append(sizes, fmt.Sprint(len(m.Text)))
		}
	}
	var cases []tc
	for _, d := range []int{0, 1} {
		req := &echov1.EchoRequest{Text: a6Text(srvLimit + d)}
		resp := a6Text(cliLimit + d)
		cases = append(cases,
			tc{name: fmt.Sprintf("unary-request/limit+%d", d), call: func(ctx context.Context, c echov1.EchoClient) string {
				r, err := c.Get(ctx, req)
				return fmt.Sprintf("%d %s", len(r.GetText()), a6Err(err))
			}},
			tc{name: fmt.Sprintf("unary-response/limit+%d", d), call: func(ctx context.Context, c echov1.EchoClient) string {
				r, err := c.Get(ctx, &echov1.EchoRequest{Text: "big " + fmt.Sprint(len(resp))}, grpc.MaxCallRecvMsgSize(cliLimit))
				return fmt.Sprintf("%d %s", len(r.GetText()), a6Err(err))
			}},
			tc{name: fmt.Sprintf("client-stream/limit+%d", d), call: func(ctx context.Context, c echov1.EchoClient) string {
				s, err := c.Collect(ctx)
				if err != nil {
					return a6Err(err)
				}
				e1 := s.Send(&echov1.EchoRequest{Text: "a"})
				e2 := s.Send(req)
				r, err := s.CloseAndRecv()
				return fmt.Sprintf("Send %s %s; %q %s", a6Err(e1), a6Err(e2), r.GetText(), a6Err(err))
			}},
			tc{name: fmt.Sprintf("bidi-request/limit+%d", d), call: func(ctx context.Context, c echov1.EchoClient) string {
				s, err := c.Update(ctx)
				if err != nil {
					return a6Err(err)
				}
				s.Send(req)
				s.CloseSend()
				return recvAll(s)
			}},
			tc{name: fmt.Sprintf("server-stream-response/limit+%d", d), call: func(ctx context.Context, c echov1.EchoClient) string {
				s, err := c.Expand(ctx, &echov1.EchoRequest{Text: fmt.Sprint(len(resp))}, grpc.MaxCallRecvMsgSize(cliLimit))
				if err != nil {
					return a6Err(err)
				}
				return recvAll(s)
			}, reports: true},
		)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a6ShmCompare(t, 1, func(t *testing.T, addr string) string {
				hs := make(chan string, 1)
				a6Server(t, addr, &a5Echo{
					get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
						var n int
						hs <- "handler ran"
						if _, err := fmt.Sscanf(r.Text, "big %d", &n); err == nil {
							return &echov1.EchoResponse{Text: strings.Repeat("r", n)}, nil
						}
						return &echov1.EchoResponse{Text: "ok"}, nil
					},
					expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
						var n int
						fmt.Sscan(r.Text, &n)
						e1 := s.Send(&echov1.EchoResponse{Text: "small"})
						e2 := s.Send(&echov1.EchoResponse{Text: strings.Repeat("r", n)})
						// A client that refuses the message cancels the call:
						// wait for it however busy the machine. One that
						// takes it cancels nothing.
						wait := 300 * time.Millisecond
						if n > cliLimit {
							wait = 5 * time.Second
						}
						select {
						case <-s.Context().Done():
						case <-time.After(wait):
						}
						e3 := s.Send(&echov1.EchoResponse{Text: "after"})
						hs <- fmt.Sprintf("handler Send: %s %s, after: %s", a6Err(e1), a6Err(e2), a6Err(e3))
						return nil
					},
					collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
						var got []string
						for {
							m, err := s.Recv()
							if err != nil {
								got = append(got, a6Err(err))
								break
							}
							got = append(got, fmt.Sprint(len(m.Text)))
						}
						hs <- fmt.Sprintf("handler Recv: %v", got)
						return s.SendAndClose(&echov1.EchoResponse{Text: "done"})
					},
					update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
						for {
							m, err := s.Recv()
							if err == io.EOF {
								hs <- "handler Recv: EOF"
								return nil
							}
							if err != nil {
								hs <- "handler Recv: " + a6Err(err)
								return err
							}
							s.Send(&echov1.EchoResponse{Text: m.Text})
						}
					},
				}, localgrpc.WithServerMaxRecvMsgSize(srvLimit))
				out := c.call(timeoutCtx(t), a6Client(t, addr))
				wait := 500 * time.Millisecond
				if c.reports {
					wait = 10 * time.Second
				}
				select {
				case h := <-hs:
					out += "; " + h
				case <-time.After(wait):
					out += "; handler saw nothing"
				}
				return out
			})
		})
	}
}

// A request that fails to marshal (a proto3 string that is not UTF-8):
// the client fails with Internal; what the server's stats handler and
// handler see is grpc-go's.
func TestAttack6ShmMarshalFailure(t *testing.T) {
	bad := &echov1.EchoRequest{Text: "ok\xff"}
	var ss *a5Rec
	calls := map[string]func(ctx context.Context, c echov1.EchoClient) string{
		"unary": func(ctx context.Context, c echov1.EchoClient) string {
			_, err := c.Get(ctx, bad)
			return a6Err(err)
		},
		"server-stream": func(ctx context.Context, c echov1.EchoClient) string {
			s, err := c.Expand(ctx, bad)
			if err != nil {
				return "Expand: " + a6Err(err)
			}
			_, err = s.Recv()
			return "Recv: " + a6Err(err)
		},
		"bidi-first": func(ctx context.Context, c echov1.EchoClient) string {
			s, _ := c.Update(ctx)
			err := s.Send(bad)
			_, rerr := s.Recv()
			return "Send: " + a6Err(err) + "; Recv: " + a6Err(rerr)
		},
		"bidi-second": func(ctx context.Context, c echov1.EchoClient) string {
			s, _ := c.Update(ctx)
			s.Send(&echov1.EchoRequest{Text: "good"})
			s.Recv()
			err := s.Send(bad)
			_, rerr := s.Recv()
			return "Send: " + a6Err(err) + "; Recv: " + a6Err(rerr)
		},
		"client-stream": func(ctx context.Context, c echov1.EchoClient) string {
			s, _ := c.Collect(ctx)
			s.Send(&echov1.EchoRequest{Text: "good"})
			for i := 0; i < 500 && !slices.Contains(ss.snapshot(), "InPayload{6}"); i++ {
				time.Sleep(time.Millisecond) // the server has read the first
			}
			err := s.Send(bad)
			_, rerr := s.CloseAndRecv()
			return "Send: " + a6Err(err) + "; CloseAndRecv: " + a6Err(rerr)
		},
	}
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		t.Run(name, func(t *testing.T) {
			a6ShmCompare(t, 1, func(t *testing.T, addr string) string {
				ss = &a5Rec{}
				hs := make(chan string, 1)
				handler := func(what string, err error) { hs <- what + ": " + a6Err(err) }
				a6Server(t, addr, &a5Echo{
					get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
						handler("unary ran", nil)
						return &echov1.EchoResponse{}, nil
					},
					expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
						handler("server-stream ran", nil)
						return nil
					},
					collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
						for {
							if _, err := s.Recv(); err != nil {
								handler("collect Recv", err)
								return err
							}
						}
					},
					update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
						for {
							m, err := s.Recv()
							if err != nil {
								handler("update Recv", err)
								return err
							}
							s.Send(&echov1.EchoResponse{Text: m.Text})
						}
					},
				}, localgrpc.WithServerStatsHandler(ss))
				out := calls[name](timeoutCtx(t), a6Client(t, addr))
				select {
				case h := <-hs:
					out += "; " + h
				case <-time.After(300 * time.Millisecond):
					out += "; handler saw nothing"
				}
				return out + fmt.Sprintf("; server stats %v", ss.settle())
			})
		})
	}
}

// a6Sent counts the requests the client has sent (OutPayload).
type a6Sent struct {
	a5Rec
	mu   sync.Mutex
	n    int
	want int
	all  chan struct{}
}

func (h *a6Sent) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.OutPayload); ok {
		h.mu.Lock()
		h.n++
		if h.n == h.want {
			close(h.all)
		}
		h.mu.Unlock()
	}
}

// Calls whose requests the client has sent (its stats handler saw each
// OutPayload) before GracefulStop begins: over a unix socket grpc-go
// serves every one.
func TestAttack6ShmGracefulStopAfterRequestsSent(t *testing.T) {
	for _, s := range a6ShmSides {
		t.Run(s.name, func(t *testing.T) {
			seen := map[string]int{}
			for range 20 {
				addr := s.addr(t)
				srv, _ := a6Server(t, addr, &a5Echo{get: func(ctx context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
					return &echov1.EchoResponse{Text: r.Text}, nil
				}})
				cs := &a6Sent{want: 11, all: make(chan struct{})}
				c := a6Client(t, addr, localgrpc.WithClientStatsHandler(cs))
				ctx := timeoutCtx(t)
				if _, err := c.Get(ctx, &echov1.EchoRequest{Text: "warm"}); err != nil {
					t.Fatal(err)
				}
				res := make(chan string, 10)
				for range 10 {
					go func() {
						r, err := c.Get(ctx, &echov1.EchoRequest{Text: "x"})
						res <- fmt.Sprintf("%q %s", r.GetText(), a6Err(err))
					}()
				}
				select {
				case <-cs.all:
				case <-time.After(5 * time.Second):
					t.Fatal("requests not sent")
				}
				stopAndCount(srv.GracefulStop, res, 10, seen)
			}
			t.Logf("%v", seen)
			for k, n := range seen {
				if k != `"x" nil` {
					t.Errorf("%s: %d times of 200, want every call served", k, n)
				}
			}
		})
	}
}

func (r *a5Rec) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// attack8: shm: against grpc-go over a unix socket served by the same
// kind of localgrpc.Server: what a server stream's Recv returns after the
// client's Close (100 small and 3 messages of 300 KB sent), Stop during
// a stream, GracefulStop while a client keeps opening streams.

func a8Conn(t *testing.T, addr string) localgrpc.ClientConn {
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// a8Drain reads st to its end: whole messages in order, then the error.
func a8Drain(st grpc.ServerStreamingClient[echov1.EchoResponse], want func(i int) string) (int, bool, error) {
	n, ok := 0, true
	for {
		m, err := st.Recv()
		if err != nil {
			return n, ok, err
		}
		ok = ok && m.Text == want(n)
		n++
	}
}

// The handler sends 100 small messages then 3 of 300 KB; the client has
// read readFirst of them when it closes its connection.
func TestAttack8ShmRecvAfterClose(t *testing.T) {
	big := strings.Repeat("b", 300<<10)
	want := func(i int) string {
		if i < 100 {
			return fmt.Sprint(i)
		}
		return fmt.Sprint(i, big)
	}
	for _, readFirst := range []int{0, 1, 100} {
		t.Run(fmt.Sprint("read", readFirst), func(t *testing.T) {
			a6ShmCompare(t, 3, func(t *testing.T, addr string) string {
				hres := make(chan string, 1)
				a6Server(t, addr, &a5Echo{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					for i := range 103 {
						if err := s.Send(&echov1.EchoResponse{Text: want(i)}); err != nil {
							<-s.Context().Done()
							// Whether a 300 KB Send blocks is the window's
							// (HTTP/2's 64 KiB vs shm's 1 MiB ring): not compared.
							t.Logf("handler Send %d failed (%v)", i, status.Code(err))
							hres <- fmt.Sprintf("handler ctx %v", s.Context().Err())
							return err
						}
					}
					<-s.Context().Done()
					t.Logf("handler sent all 103")
					hres <- fmt.Sprintf("handler ctx %v", s.Context().Err())
					return nil
				}})
				cc := a8Conn(t, addr)
				st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					return a6Err(err)
				}
				for i := range readFirst {
					if m, err := st.Recv(); err != nil || m.Text != want(i) {
						return fmt.Sprintf("pre-read %d: %v", i, err)
					}
				}
				time.Sleep(100 * time.Millisecond)
				cc.Close()
				h := receiveOr(hres, "handler still running 3s after Close")
				n, ok, rerr := a8Drain(st, func(i int) string { return want(i + readFirst) })
				t.Logf("%s: read %d more after Close", addr[:4], n)
				_, again := st.Recv()
				return fmt.Sprintf("whole in order %v, then %s, again %s; %s", ok, a6Err(rerr), a6Err(again), h)
			})
		})
	}
}

// Stop while the client waits in Recv on a server stream, and while the
// handler blocks in Send of a 300 KB message.
func TestAttack8ShmStopDuringStream(t *testing.T) {
	big := strings.Repeat("b", 300<<10)
	for _, mode := range []string{"idle", "blocked-send"} {
		t.Run(mode, func(t *testing.T) {
			a6ShmCompare(t, 3, func(t *testing.T, addr string) string {
				started, hres := make(chan struct{}), make(chan string, 1)
				srv, served := a6Server(t, addr, &a5Echo{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					s.Send(&echov1.EchoResponse{Text: "first"})
					close(started)
					if mode == "idle" {
						<-s.Context().Done()
						hres <- "ctx " + fmt.Sprint(s.Context().Err())
						return nil
					}
					for i := 0; ; i++ {
						if err := s.Send(&echov1.EchoResponse{Text: big}); err != nil {
							hres <- fmt.Sprintf("Send failed (%v) ctx %v", status.Code(err), s.Context().Err())
							return err
						}
					}
				}})
				cc := a8Conn(t, addr)
				st, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					return a6Err(err)
				}
				m, err := st.Recv()
				if err != nil || m.Text != "first" {
					return "first: " + a6Err(err)
				}
				<-started
				time.Sleep(50 * time.Millisecond)
				stopDone := make(chan struct{})
				go func() { srv.Stop(); close(stopDone) }()
				out := a7Wait(stopDone, "Stop")
				h := receiveOr(hres, "handler still running 3s after Stop")
				var rerr error
				n := 0
				for {
					m, err := st.Recv()
					if err != nil {
						rerr = err
						break
					}
					if m.Text != big {
						return "torn message"
					}
					n++
				}
				serr := "Serve did not return"
				select {
				case err := <-served:
					serr = fmt.Sprintf("Serve %v", err)
				case <-time.After(time.Second):
				}
				// A new call on the same connection after Stop.
				_, err = echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{})
				return out + fmt.Sprintf("Recv then %s; handler %s; %s; new call %v", status.Code(rerr), h, serr, status.Code(err))
			})
		})
	}
}

// GracefulStop while a client keeps opening streams (a bidi stream per
// iteration, each one message there and back) and one stream stays open
// until the drain began: GracefulStop returns once the open stream ends;
// every stream opened is served or refused with Unavailable.
func TestAttack8ShmGracefulStopStreamsOpening(t *testing.T) {
	a6ShmCompare(t, 3, func(t *testing.T, addr string) string {
		release := make(chan struct{})
		var held atomic.Bool
		srv, served := a6Server(t, addr, &a5Echo{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			m, err := s.Recv()
			if err != nil {
				return err
			}
			if m.Text == "hold" {
				held.Store(true)
				<-release
			}
			return s.Send(&echov1.EchoResponse{Text: m.Text})
		}})
		cc := a8Conn(t, addr)
		c := echov1.NewEchoClient(cc)
		ctx := timeoutCtx(t)
		hold, err := c.Update(ctx)
		if err != nil {
			return a6Err(err)
		}
		hold.Send(&echov1.EchoRequest{Text: "hold"})
		for !held.Load() {
			time.Sleep(time.Millisecond)
		}
		var mu sync.Mutex
		codes := map[string]int{}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					st, err := c.Update(cctx)
					if err == nil {
						err = st.Send(&echov1.EchoRequest{Text: "x"})
						if err == nil {
							_, err = st.Recv()
						} else {
							_, err = st.Recv()
						}
					}
					cancel()
					mu.Lock()
					codes[status.Code(err).String()]++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(30 * time.Millisecond)
		gsDone := make(chan struct{})
		go func() { srv.GracefulStop(); close(gsDone) }()
		time.Sleep(100 * time.Millisecond)
		early := "GracefulStop waits for the held stream"
		select {
		case <-gsDone:
			early = "GracefulStop returned with a stream open"
		default:
		}
		close(release)
		m, herr := hold.Recv()
		out := early + "; " + a7Wait(gsDone, "GracefulStop")
		time.Sleep(50 * time.Millisecond)
		close(stop)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		kinds := []string{}
		for k := range codes {
			if k != "OK" && k != "Unavailable" {
				kinds = append(kinds, k)
			}
		}
		t.Logf("%s codes %v", addr[:4], codes)
		serr := "Serve did not return"
		select {
		case err := <-served:
			serr = fmt.Sprintf("Serve %v", err)
		case <-time.After(time.Second):
		}
		text := ""
		if m != nil {
			text = m.Text
		}
		return out + fmt.Sprintf("held %q %v; other codes %v, unavailable seen %v; %s", text, status.Code(herr), kinds, codes["Unavailable"] > 0, serr)
	})
}

// stopAndCount runs stop, bounded to 5s, then counts the outcomes of the n
// calls res reports into seen, a GracefulStop or a call still hanging
// after 5s among them.
func stopAndCount(stop func(), res <-chan string, n int, seen map[string]int) {
	_, wait := a6Returns(stop, 5*time.Second)
	if !wait() {
		seen["GracefulStop hung"]++
	}
	for range n {
		select {
		case r := <-res:
			seen[r]++
		case <-time.After(5 * time.Second):
			seen["call hung"]++
		}
	}
}

// serveOutcome says how Serve, whose result served reports, ended, or
// that it had not returned 5s on.
func serveOutcome(served <-chan error) string {
	select {
	case err := <-served:
		return fmt.Sprintf("; Serve: %v", err)
	case <-time.After(5 * time.Second):
		return "; Serve did not return"
	}
}
