package localgrpc_test

// attack5: stats handler events through localgrpc.NewClient("inproc:…")
// with localgrpc's own stats options, in every inproc mode, compared with
// grpc-go over bufconn with the same handlers: unknown services and
// methods, a plain unary call, responses over the client's
// MaxCallRecvMsgSize (per call and as a default call option).

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

type a5Rec struct {
	mu     sync.Mutex
	events []string
}

func (r *a5Rec) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (r *a5Rec) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (r *a5Rec) HandleConn(context.Context, stats.ConnStats)                       {}
func (r *a5Rec) HandleRPC(_ context.Context, s stats.RPCStats) {
	var e string
	switch s := s.(type) {
	case *stats.End:
		e = fmt.Sprintf("End{%v}", status.Code(s.Error))
	case *stats.DelayedPickComplete:
		return
	case *stats.InPayload:
		e = fmt.Sprintf("InPayload{%d}", s.Length)
	case *stats.OutPayload:
		e = fmt.Sprintf("OutPayload{%d}", s.Length)
	default:
		e = strings.TrimPrefix(fmt.Sprintf("%T", s), "*stats.")
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// settle waits until r's events stop changing.
func (r *a5Rec) settle() []string {
	var last []string
	for range 40 {
		time.Sleep(10 * time.Millisecond)
		r.mu.Lock()
		cur := slices.Clone(r.events)
		r.mu.Unlock()
		if len(cur) > 0 && slices.Equal(cur, last) {
			return cur
		}
		last = cur
	}
	return last
}

type a5StatsCase struct {
	name string
	call func(ctx context.Context, cc grpc.ClientConnInterface) error
	dflt []grpc.CallOption // default call options of the connection
}

var a5Big = strings.Repeat("x", 100)

var a5StatsCases = []a5StatsCase{
	{"ok", func(ctx context.Context, cc grpc.ClientConnInterface) error {
		_, err := echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{Text: "hi"})
		return err
	}, nil},
	{"unknown-service", func(ctx context.Context, cc grpc.ClientConnInterface) error {
		return cc.Invoke(ctx, "/nosuch.v1.S/Get", &echov1.EchoRequest{Text: "hi"}, &echov1.EchoResponse{})
	}, nil},
	{"unknown-method", func(ctx context.Context, cc grpc.ClientConnInterface) error {
		return cc.Invoke(ctx, "/echo.v1.Echo/Nope", &echov1.EchoRequest{Text: "hi"}, &echov1.EchoResponse{})
	}, nil},
	{"recv-limit-call", func(ctx context.Context, cc grpc.ClientConnInterface) error {
		_, err := echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{Text: a5Big}, grpc.MaxCallRecvMsgSize(10))
		return err
	}, nil},
	{"recv-limit-default", func(ctx context.Context, cc grpc.ClientConnInterface) error {
		_, err := echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{Text: a5Big})
		return err
	}, []grpc.CallOption{grpc.MaxCallRecvMsgSize(10)}},
	{"recv-limit-server-stream", func(ctx context.Context, cc grpc.ClientConnInterface) error {
		s, err := echov1.NewEchoClient(cc).Expand(ctx, &echov1.EchoRequest{Text: a5Big}, grpc.MaxCallRecvMsgSize(10))
		if err != nil {
			return err
		}
		for {
			if _, err := s.Recv(); err != nil {
				return err
			}
		}
	}, nil},
}

func a5StatsEcho() *a5Echo {
	return &a5Echo{
		get: func(_ context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			return &echov1.EchoResponse{Text: r.Text}, nil
		},
		expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			return s.Send(&echov1.EchoResponse{Text: r.Text})
		},
	}
}

func TestAttack5StatsThroughNewClient(t *testing.T) {
	for _, c := range a5StatsCases {
		t.Run(c.name, func(t *testing.T) {
			run := func(cc grpc.ClientConnInterface, cs, ss *a5Rec) string {
				err := c.call(timeoutCtx(t), cc)
				return fmt.Sprintf("code=%v\n client %v\n server %v", status.Code(err), cs.settle(), ss.settle())
			}
			// grpc-go's client orders some events as its goroutines run:
			// every outcome of a few runs is grpc-go's.
			wants := map[string]bool{}
			for range 5 {
				cs, ss := &a5Rec{}, &a5Rec{}
				cc := servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, a5StatsEcho()) },
					[]grpc.ServerOption{grpc.StatsHandler(ss)}, grpc.WithStatsHandler(cs), grpc.WithDefaultCallOptions(c.dflt...))
				wants[run(cc, cs, ss)] = true
			}
			want := strings.Join(slices.Sorted(maps.Keys(wants)), "\n or ")
			t.Logf("grpc-go: %s", want)
			for _, m := range inprocModes {
				t.Run(m.name, func(t *testing.T) {
					cs, ss := &a5Rec{}, &a5Rec{}
					srv := localgrpc.NewServer(append(slices.Clone(m.opts), localgrpc.WithServerStatsHandler(ss))...)
					echov1.RegisterEchoServer(srv, a5StatsEcho())
					addr := "inproc:" + uniqueName(t)
					serve(t, srv, addr)
					cc, err := localgrpc.NewClient(addr, localgrpc.WithClientStatsHandler(cs), localgrpc.WithDefaultCallOptions(c.dflt...))
					if err != nil {
						t.Fatal(err)
					}
					defer cc.Close()
					if got := run(cc, cs, ss); !wants[got] {
						t.Errorf("\ninproc:  %s\ngrpc-go: %s", got, want)
					}
				})
			}
		})
	}
}

// endNotifier is a stats handler that tells of every call that ends:
// its method and its error.
type endNotifier struct{ ended chan callEnd }

type callEnd struct {
	method string
	err    error
}

type methodKey struct{}

func (n endNotifier) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, info.FullMethodName)
}

func (n endNotifier) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.End); ok {
		n.ended <- callEnd{ctx.Value(methodKey{}).(string), s.(*stats.End).Error}
	}
}

func (endNotifier) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (endNotifier) HandleConn(context.Context, stats.ConnStats)                       {}

// TestStatsHandlerOnEveryTransport checks that a stats handler given once
// hears of calls on every transport.
func TestStatsHandlerOnEveryTransport(t *testing.T) {
	h := endNotifier{ended: make(chan callEnd, 1)}
	srv := newEchoServer(localgrpc.WithServerStatsHandler(h))
	serve(t, srv, "inproc:"+uniqueName(t), "unix:"+socketPath(t), "unix:@"+uniqueName(t), "127.0.0.1:0")
	for _, addr := range srv.Addrs() {
		if _, err := dial(t, addr).Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-h.ended:
			if e.method != "/echo.v1.Echo/Get" {
				t.Errorf("%s: the stats handler saw the end of %q, want /echo.v1.Echo/Get", addr, e.method)
			}
		case <-time.After(waitLimit):
			t.Errorf("%s: the stats handler saw no end of the call", addr)
		}
	}
}
