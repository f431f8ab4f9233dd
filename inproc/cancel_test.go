package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// TestCancelAnywhere: bidi calls moving large and empty messages
// through tiny windows, each ended at a random moment by the client's
// cancel, its deadline, Stop, or GracefulStop racing with Stop. Every call
// must end with a sensible code, nothing may hang, and (TestMain's goleak)
// no goroutine may survive.
func TestCancelAnywhere(t *testing.T) {
	big := strings.Repeat("b", 3000)
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		for {
			r, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			for range 3 {
				if err := s.Send(&echov1.EchoResponse{Text: r.GetText()}); err != nil {
					return err
				}
			}
		}
	}}
	forEachMode(t, func(t *testing.T, m testMode) {
		for _, how := range []string{"cancel", "deadline", "stop", "graceful"} {
			t.Run(how, func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(how)), 7))
				for iter := range 30 {
					ch := inproc.New(append(m.opts, inproc.WithWindow(1+r.IntN(3)), inproc.WithWindowBytes(1+r.IntN(5000)))...)
					echov1.RegisterEchoServer(ch, srv)
					c := echov1.NewEchoClient(ch)
					ctx, cancel := context.WithCancel(t.Context())
					if how == "deadline" {
						ctx, cancel = context.WithTimeout(t.Context(), time.Duration(r.IntN(2000))*time.Microsecond)
					}
					delay := time.Duration(r.IntN(1500)) * time.Microsecond
					var wg sync.WaitGroup
					errs := make(chan error, 3)
					s, err := c.Update(ctx)
					if err != nil {
						errs <- err
					} else {
						wg.Go(func() {
							for i := 0; ; i++ {
								text := big
								if i%3 == 0 {
									text = ""
								}
								if err := s.Send(&echov1.EchoRequest{Text: text}); err != nil {
									return
								}
							}
						})
						wg.Go(func() {
							for {
								if _, err := s.Recv(); err != nil {
									errs <- err
									return
								}
							}
						})
					}
					time.Sleep(delay)
					switch how {
					case "cancel":
						cancel()
					case "stop":
						ch.Stop()
					case "graceful":
						go ch.GracefulStop()
						time.Sleep(delay / 2)
						ch.Stop()
					}
					done := make(chan struct{})
					go func() { wg.Wait(); close(done) }()
					select {
					case <-done:
					case <-time.After(waitLimit):
						cancel()
						ch.Stop()
						t.Fatalf("iteration %d: the call did not end within %v of its %s", iter, waitLimit, how)
					}
					if err := <-errs; err != nil && !errors.Is(err, io.EOF) {
						wantCode(t, fmt.Sprintf("iteration %d", iter), err, codes.Canceled, codes.DeadlineExceeded, codes.Unavailable)
					}
					cancel()
					ch.Stop()
				}
			})
		}
	})
}

// probeEndWatch is a stats handler that closes done once: on the client's
// InTrailer (grpc-go reports it from its transport's reader as soon as the
// trailers arrive), or on the server's End (in-process, the handler's
// status is then out and every message it sent is queued for the client).
type probeEndWatch struct {
	client bool
	once   sync.Once
	done   chan struct{}
	// reads watches the client's connection (grpc-go's), whose reader
	// reports InTrailer just before it ends the stream: trailerAt is the
	// count of its reads then.
	reads     *readCount
	trailerAt int64
}

func newProbeEndWatch(client bool) *probeEndWatch {
	return &probeEndWatch{client: client, done: make(chan struct{})}
}

// ended waits until the call's whole answer arrived: done, and for
// grpc-go's client, a read that its transport began after the trailers,
// which it begins only once it handled them (the stream ended).
func (h *probeEndWatch) ended(t *testing.T) {
	t.Helper()
	receive(t, h.done, "the end of the call")
	if h.reads == nil {
		return
	}
	for h.reads.n.Load() <= h.trailerAt {
		receive(t, h.reads.began, "the transport's next read")
	}
}

// readCount counts the reads begun on the connections a readWatch wraps.
type readCount struct {
	n     atomic.Int64
	began chan struct{} // a token after each read begins
}

// readWatch is a connection whose reads are counted.
type readWatch struct {
	net.Conn
	*readCount
}

func (c *readWatch) Read(p []byte) (int, error) {
	c.n.Add(1)
	select {
	case c.began <- struct{}{}:
	default:
	}
	return c.Conn.Read(p)
}

func (h *probeEndWatch) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (h *probeEndWatch) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (h *probeEndWatch) HandleConn(context.Context, stats.ConnStats) {}
func (h *probeEndWatch) HandleRPC(_ context.Context, s stats.RPCStats) {
	switch s.(type) {
	case *stats.InTrailer:
		if h.client && s.IsClient() {
			h.once.Do(func() {
				if h.reads != nil {
					h.trailerAt = h.reads.n.Load()
				}
				close(h.done)
			})
		}
	case *stats.End:
		if !h.client && !s.IsClient() {
			h.once.Do(func() { close(h.done) })
		}
	}
}

// TestCancelAfterStatusArrived: the handler sends its responses and
// returns (OK, or an error status) with a trailer; the client, which has
// read none of them, waits until the whole answer has reached it, then
// cancels its context and receives. grpc-go's client transport keeps what
// arrived: the cancel is queued behind the buffered messages and the
// stream is already done, so RecvMsg delivers every message and then the
// handler's status (io.EOF, or its error), and Trailer is the handler's.
// This does not depend on timing, as TestCancelledStreamEndsCanceled's
// case does: the trailers had arrived before the cancel. Isolated only:
// an Inline handler does not run to its end without its client driving it.
func TestCancelAfterStatusArrived(t *testing.T) {
	type outcome struct {
		name string
		end  error // what the handler returns
	}
	for _, oc := range []outcome{{"ok", nil}, {"not-found", status.Error(codes.NotFound, "gone")}} {
		srv := &funcEcho{
			expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				s.SetTrailer(metadata.Pairs("t", "v"))
				for i := range 3 {
					if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint("r", i)}); err != nil {
						return err
					}
				}
				return oc.end
			},
			collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				s.SetTrailer(metadata.Pairs("t", "v"))
				for {
					if _, err := s.Recv(); err != nil {
						if !errors.Is(err, io.EOF) {
							return err
						}
						break
					}
				}
				if oc.end != nil {
					return oc.end
				}
				return s.SendAndClose(&echov1.EchoResponse{Text: "r0"})
			},
			update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				s.SetTrailer(metadata.Pairs("t", "v"))
				if _, err := s.Recv(); err != nil {
					return err
				}
				for i := range 2 {
					if err := s.Send(&echov1.EchoResponse{Text: fmt.Sprint("r", i)}); err != nil {
						return err
					}
				}
				return oc.end
			},
		}
		for _, kind := range []string{"server-stream", "client-stream", "bidi"} {
			run := func(t *testing.T, c echov1.EchoClient, w *probeEndWatch) string {
				ctx, cancel := context.WithCancel(timeoutCtx(t))
				defer cancel()
				var recv func() (*echov1.EchoResponse, error)
				var trailer func() metadata.MD
				switch kind {
				case "server-stream":
					s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "x"})
					if err != nil {
						return "Expand: " + err.Error()
					}
					recv, trailer = s.Recv, s.Trailer
				case "client-stream":
					s, err := c.Collect(ctx)
					if err != nil {
						return "Collect: " + err.Error()
					}
					if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
						return "Send: " + err.Error()
					}
					if err := s.CloseSend(); err != nil {
						return "CloseSend: " + err.Error()
					}
					recv = func() (*echov1.EchoResponse, error) {
						m := new(echov1.EchoResponse)
						return m, s.RecvMsg(m)
					}
					trailer = s.Trailer
				case "bidi":
					s, err := c.Update(ctx)
					if err != nil {
						return "Update: " + err.Error()
					}
					if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
						return "Send: " + err.Error()
					}
					if err := s.CloseSend(); err != nil {
						return "CloseSend: " + err.Error()
					}
					recv, trailer = s.Recv, s.Trailer
				}
				w.ended(t)
				cancel()
				var got []string
				for range 5 {
					r, err := recv()
					if err != nil {
						got = append(got, fmt.Sprintf("err=%v", status.Code(err)))
						if errors.Is(err, io.EOF) {
							got[len(got)-1] = "EOF"
						}
						break
					}
					got = append(got, r.GetText())
					if kind == "client-stream" {
						got = append(got, "(one response)")
						break
					}
				}
				return fmt.Sprintf("%s | trailer %v", strings.Join(got, " "), trailer()["t"])
			}
			t.Run(oc.name+"/"+kind, func(t *testing.T) {
				w := newProbeEndWatch(true)
				w.reads = &readCount{began: make(chan struct{}, 1)}
				wrap := func(nc net.Conn) net.Conn { return &readWatch{nc, w.reads} }
				ref := servertest.GRPCOverWrappedBufconn(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, nil, wrap, grpc.WithStatsHandler(w))
				want := run(t, echov1.NewEchoClient(ref), w)
				forEachMode(t, func(t *testing.T, m testMode) {
					if !isIsolated(t, m) {
						t.Skip("an Inline handler runs only while its client drives it")
					}
					w := newProbeEndWatch(false)
					c, _ := newEcho(t, m, srv, inproc.WithServerStatsHandler(w))
					if got := run(t, c, w); got != want {
						t.Errorf("after the whole answer arrived, cancel, then receive:\ninproc:  %s\ngrpc-go: %s", got, want)
					}
				})
			})
		}
	}
}

// TestContextEndsDuringNewStream ends the client's context at the moment
// the stream is being set up, by another goroutine or by a deadline of a
// few microseconds, many times over, in every mode: each call must end
// with Canceled or DeadlineExceeded, or succeed if it won the race, and
// never crash (an Inline stream once panicked when the context ended
// before its coroutine existed).
func TestContextEndsDuringNewStream(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		_, ch := newEcho(t, m, &funcEcho{})
		for i := range rounds {
			var ctx context.Context
			var cancel context.CancelFunc
			if i%2 == 0 {
				ctx, cancel = context.WithCancel(t.Context())
				go cancel()
			} else {
				ctx, cancel = context.WithTimeout(t.Context(), time.Duration(1+i%7)*time.Microsecond)
			}
			err := callOnce(ctx, ch, &echov1.Echo_ServiceDesc.Streams[2], echov1.Echo_Update_FullMethodName)
			cancel()
			if err != nil {
				wantCode(t, "a call whose context ended as it began", err, codes.Canceled, codes.DeadlineExceeded)
			}
		}
	})
}
