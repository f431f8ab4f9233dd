package inproc_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// kindsRecorder is a stats handler that records the tags and events of
// one side of a call, until the call's last event (see take).
type kindsRecorder struct {
	mu     sync.Mutex
	tags   []stats.RPCTagInfo
	events []stats.RPCStats
	ends   chan struct{}
	last   func(stats.RPCStats) bool // whether an event is a call's last
	fields eventFields               // of the events take took last
}

func newKindsRecorder() *kindsRecorder { return recorderUntil[*stats.End]() }

// recorderUntil is a kindsRecorder of calls whose last event is a T: an
// End, or an OutTrailer on a server that answers without beginning a call.
func recorderUntil[T stats.RPCStats]() *kindsRecorder {
	return &kindsRecorder{ends: make(chan struct{}, 8), last: func(s stats.RPCStats) bool {
		_, ok := s.(T)
		return ok
	}}
}

func (r *kindsRecorder) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	r.mu.Lock()
	r.tags = append(r.tags, *info)
	r.mu.Unlock()
	return ctx
}

func (r *kindsRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
	if r.last(s) {
		r.ends <- struct{}{}
	}
}
func (*kindsRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*kindsRecorder) HandleConn(context.Context, stats.ConnStats)                       {}

// take waits for the call's last event and returns the events' kinds,
// with header and trailer keys, the method a server's InHeader names, the
// kind of method a Begin says, and the code an End reports.
func (r *kindsRecorder) take(t *testing.T) []string {
	t.Helper()
	receive(t, r.ends, "the call's last stats event")
	return r.drain()
}

// drain is take without the wait: the kinds of what r heard so far.
func (r *kindsRecorder) drain() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		switch e := e.(type) {
		case *stats.InHeader:
			out = append(out, fmt.Sprintf("InHeader%v%s", keys(e.Header, "grpc-accept-encoding"), e.FullMethod))
		case *stats.OutHeader:
			out = append(out, fmt.Sprintf("OutHeader%v", keys(e.Header)))
		case *stats.InTrailer:
			out = append(out, fmt.Sprintf("InTrailer%v", keys(e.Trailer)))
		case *stats.OutTrailer:
			out = append(out, fmt.Sprintf("OutTrailer%v", keys(e.Trailer)))
		case *stats.Begin:
			out = append(out, fmt.Sprintf("Begin{client-stream=%v server-stream=%v}", e.IsClientStream, e.IsServerStream))
		case *stats.End:
			out = append(out, fmt.Sprintf("End{%v}", status.Code(e.Error)))
		case *stats.InPayload:
			out = append(out, "InPayload")
		case *stats.OutPayload:
			out = append(out, "OutPayload")
		case *stats.DelayedPickComplete:
			// grpc-go's client waited for a connection to pick; a
			// Channel has none to wait for.
		default:
			out = append(out, fmt.Sprintf("%T", e))
		}
	}
	r.fields = fieldsOf(r.tags, r.events)
	r.tags, r.events = nil, nil
	return out
}

// eventFields is what the events of one side say besides their kinds, by
// kind, in order (see fieldsOf).
type eventFields map[string][]string

// fieldsOf renders every field of tags and events that a call in-process
// can give as a call over a socket gives it. Left out: the addresses but
// whether they are set (a Channel has none of a socket's); times but
// whether an End's BeginTime is its Begin's and it ends no earlier (they
// differ from run to run); the header's and trailer's WireLength, the
// HPACK frame's, whose size depends on what the connection sent before
// (the same header is shorter on a connection's second call); the tag's
// NameResolutionDelay (a Channel has no resolver to wait for); the
// grpc-accept-encoding header, which grpc-go's client sends only for
// compressors it knows of. An error is its code: messages differ.
func fieldsOf(tags []stats.RPCTagInfo, events []stats.RPCStats) eventFields {
	out := eventFields{}
	add := func(kind, format string, args ...any) { out[kind] = append(out[kind], fmt.Sprintf(format, args...)) }
	for _, tg := range tags {
		add("Tag", "method=%s fail-fast=%v", tg.FullMethodName, tg.FailFast)
	}
	var begin time.Time
	for _, e := range events {
		switch e := e.(type) {
		case *stats.Begin:
			begin = e.BeginTime
			add("Begin", "client=%v fail-fast=%v client-stream=%v server-stream=%v retry=%v", e.Client, e.FailFast, e.IsClientStream, e.IsServerStream, e.IsTransparentRetryAttempt)
		case *stats.InHeader:
			add("InHeader", "client=%v method=%q compression=%q addrs=%v header=%s", e.Client, e.FullMethod, e.Compression, addrsSet(e.RemoteAddr, e.LocalAddr), mdText(e.Header))
		case *stats.OutHeader:
			add("OutHeader", "client=%v method=%q authority=%q compression=%q addrs=%v header=%s", e.Client, e.FullMethod, e.Authority, e.Compression, addrsSet(e.RemoteAddr, e.LocalAddr), mdText(e.Header))
		case *stats.InTrailer:
			add("InTrailer", "client=%v trailer=%s", e.Client, mdText(e.Trailer))
		case *stats.OutTrailer:
			add("OutTrailer", "client=%v trailer=%s", e.Client, mdText(e.Trailer))
		case *stats.InPayload:
			add("InPayload", "client=%v %T length=%d compressed=%d wire=%d", e.Client, e.Payload, e.Length, e.CompressedLength, e.WireLength)
		case *stats.OutPayload:
			add("OutPayload", "client=%v %T length=%d compressed=%d wire=%d", e.Client, e.Payload, e.Length, e.CompressedLength, e.WireLength)
		case *stats.End:
			add("End", "client=%v code=%v trailer=%s begin-is-begin's=%v ends-after=%v", e.Client, status.Code(e.Error), mdText(e.Trailer), e.BeginTime.Equal(begin), !e.EndTime.Before(e.BeginTime))
		}
	}
	return out
}

// addrsSet says which of a remote and a local address are set.
func addrsSet(remote, local net.Addr) string {
	return fmt.Sprintf("remote:%v,local:%v", remote != nil, local != nil)
}

// mdText is md's keys and values, sorted, without grpc-accept-encoding.
// An empty md and a nil one read the same: neither has a key.
func mdText(md metadata.MD) string {
	var b strings.Builder
	for _, k := range keys(md, "grpc-accept-encoding") {
		fmt.Fprintf(&b, "%s=%q ", k, md[k])
	}
	return "[" + strings.TrimSuffix(b.String(), " ") + "]"
}

// compareFields reports where got's events say other than want's, event
// by event of each kind: an event of a kind one side lacks is the
// kinds' check's to report.
func compareFields(t *testing.T, side string, got, want eventFields) {
	t.Helper()
	for _, kind := range slices.Sorted(maps.Keys(want)) {
		for i, w := range want[kind] {
			if i < len(got[kind]) && got[kind][i] != w {
				t.Errorf("the %s's %s #%d: %s; grpc-go's: %s", side, kind, i+1, got[kind][i], w)
			}
		}
	}
}

// statsSides runs call once against grpc-go over bufconn and once per
// mode against inproc, each with a client and a server stats handler,
// gives check the events each side's handler saw (see kindsRecorder.take),
// and fails where an inproc event's fields differ from those of the same
// event of grpc-go's (see fieldsOf).
func statsSides(t *testing.T, srv echov1.EchoServer, call func(t *testing.T, c echov1.EchoClient), check func(t *testing.T, client, server []string, grpcgo bool)) {
	t.Helper()
	statsConns(t, statsServer{impl: srv}, newKindsRecorder, nil, func(t *testing.T, cc grpc.ClientConnInterface) { call(t, echov1.NewEchoClient(cc)) }, check)
}

// statsServer is the server of a stats oracle test: its implementation,
// and the options that give grpc-go's server and a Channel the same
// limits.
type statsServer struct {
	impl     echov1.EchoServer
	grpcOpts []grpc.ServerOption
	opts     []inproc.Option
}

// noServerStats makes the server of a stats oracle test go without a
// stats handler; check then gets no server events.
func noServerStats() *kindsRecorder { return nil }

// statsConns is statsSides for a call on the connection itself. The
// server's events end as a recorder of newServer says. Where the order of
// grpc-go's events depends on which of its goroutines runs first, settled
// says whether they went as they go unless one stalls (a nil settled
// takes any), and grpc-go runs again, up to ten times, until they did.
func statsConns(t *testing.T, srv statsServer, newServer func() *kindsRecorder, settled func(client, server []string) bool, call func(t *testing.T, cc grpc.ClientConnInterface), check func(t *testing.T, client, server []string, grpcgo bool)) {
	t.Helper()
	take := func(r *kindsRecorder) ([]string, eventFields) {
		if r == nil {
			return nil, nil
		}
		return r.take(t), r.fields
	}
	var wantC, wantS []string
	var wantCF, wantSF eventFields
	for try := 1; ; try++ {
		cs, ss := newKindsRecorder(), newServer()
		sopts := slices.Clone(srv.grpcOpts)
		if ss != nil {
			sopts = append(sopts, grpc.StatsHandler(ss))
		}
		// The authority a Channel's calls send, so that headers compare.
		dopts := []grpc.DialOption{grpc.WithStatsHandler(cs), grpc.WithAuthority("inproc")}
		call(t, realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv.impl) }, sopts, dopts))
		wantC, wantCF = take(cs)
		wantS, wantSF = take(ss)
		t.Logf("grpc-go client: %v", wantC)
		t.Logf("grpc-go server: %v", wantS)
		if settled == nil || settled(wantC, wantS) {
			break
		}
		if try == 10 {
			t.Fatalf("grpc-go: the events never went as they go unless a goroutine stalls, in %d tries", try)
		}
	}
	check(t, wantC, wantS, true)
	forEachMode(t, func(t *testing.T, m testMode) {
		cs, ss := newKindsRecorder(), newServer()
		opts := append(slices.Clone(srv.opts), inproc.WithClientStatsHandler(cs))
		if ss != nil {
			opts = append(opts, inproc.WithServerStatsHandler(ss))
		}
		_, ch := newEcho(t, m, srv.impl, opts...)
		call(t, ch)
		gotC, gotCF := take(cs)
		gotS, gotSF := take(ss)
		check(t, gotC, gotS, false)
		compareFields(t, "client", gotCF, wantCF)
		compareFields(t, "server", gotSF, wantSF)
		if t.Failed() {
			t.Logf("inproc client: %v", gotC)
			t.Logf("inproc server: %v", gotS)
		}
	})
}

// grpcSides are grpc-go's events of both sides of a stats oracle test's
// call, kept by its check to compare inproc's with.
type grpcSides struct{ client, server []string }

// same fails where inproc's events differ from grpc-go's, side by side.
func (g *grpcSides) same(t *testing.T, client, server []string) {
	t.Helper()
	if !slices.Equal(client, g.client) {
		t.Errorf("the client's stats handler saw %v, grpc-go's %v", client, g.client)
	}
	if !slices.Equal(server, g.server) {
		t.Errorf("the server's stats handler saw %v, grpc-go's %v", server, g.server)
	}
}

// hasEvent reports whether an event of events begins with prefix.
func hasEvent(events []string, prefix string) bool {
	return slices.ContainsFunc(events, func(e string) bool { return len(e) >= len(prefix) && e[:len(prefix)] == prefix })
}

// oracleFail reports a check that grpc-go itself fails: the test's
// premise about grpc-go is wrong.
func oracleFail(t *testing.T, grpcgo bool, format string, args ...any) {
	t.Helper()
	if grpcgo {
		t.Fatalf("grpc-go: "+format, args...)
	}
	t.Errorf(format, args...)
}

var trailersOnlyEcho = &funcEcho{
	get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		return nil, status.Error(codes.NotFound, "no")
	},
	expand: func(*echov1.EchoRequest, grpc.ServerStreamingServer[echov1.EchoResponse]) error {
		return status.Error(codes.NotFound, "no")
	},
}

// TestStatsTrailersOnlyAsGRPC: a call whose handler fails before any
// header ends with trailers only. grpc-go's server then reports no
// OutHeader (http2_server.go writeStatus writes ":status" and
// content-type with the trailer, no header frame), and its client no
// InHeader (http2_client.go operateHeaders reports InHeader only for a
// frame without END_STREAM; a trailers-only frame gives InTrailer).
func TestStatsTrailersOnlyAsGRPC(t *testing.T) {
	check := func(t *testing.T, client, server []string, grpcgo bool) {
		if hasEvent(client, "InHeader") {
			oracleFail(t, grpcgo, "the client's stats handler saw an InHeader of a trailers-only response: %v", client)
		}
		if hasEvent(server, "OutHeader") {
			oracleFail(t, grpcgo, "the server's stats handler saw an OutHeader for a trailers-only response: %v", server)
		}
		if !hasEvent(client, "InTrailer[content-type]") {
			oracleFail(t, grpcgo, "the client's stats handler saw no InTrailer with the content-type: %v", client)
		}
	}
	t.Run("unary", func(t *testing.T) {
		statsSides(t, trailersOnlyEcho, func(t *testing.T, c echov1.EchoClient) {
			_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{})
			wantCode(t, "Get", err, codes.NotFound)
		}, check)
	})
	t.Run("server-stream", func(t *testing.T) {
		statsSides(t, trailersOnlyEcho, func(t *testing.T, c echov1.EchoClient) {
			s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = echotest.RecvAll(s.Recv)
			wantCode(t, "Expand", err, codes.NotFound)
		}, check)
	})
}

// TestStatsCancelledAsGRPC: a bidi call the client cancels while its
// handler waits for the end. Over a socket, no trailer reaches the client
// (its stats handler sees no InHeader, no InTrailer, nothing after End),
// and the server's stream is done before its handler's context ends, so
// its writeStatus sends nothing: no OutHeader, no OutTrailer.
func TestStatsCancelledAsGRPC(t *testing.T) {
	srv := &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		<-s.Context().Done()
		return s.Context().Err()
	}}
	statsSides(t, srv, func(t *testing.T, c echov1.EchoClient) {
		ctx, cancel := context.WithCancel(timeoutCtx(t))
		s, err := c.Update(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(&echov1.EchoRequest{}); err != nil {
			t.Fatal(err)
		}
		cancel()
		_, err = s.Recv()
		wantCode(t, "Recv", err, codes.Canceled)
	}, func(t *testing.T, client, server []string, grpcgo bool) {
		if hasEvent(client, "InTrailer") || hasEvent(client, "InHeader") {
			oracleFail(t, grpcgo, "the client's stats handler saw a header or trailer the server never sent: %v", client)
		}
		if !hasEvent(client[len(client)-1:], "End") {
			oracleFail(t, grpcgo, "the client's stats handler saw events after End: %v", client)
		}
		if hasEvent(server, "OutHeader") || hasEvent(server, "OutTrailer") {
			oracleFail(t, grpcgo, "the server's stats handler saw a header or trailer sent after the client left: %v", server)
		}
	})
}

// TestStatsNotBegunAsGRPC: a call that grpc-go's client fails before it
// tags it for its stats handlers: one made with a context that has ended,
// cancelled or past its deadline (stream.go newAttemptLocked looks at the
// context first), with outgoing metadata its transport would not send
// (newClientStream validates it first), or with a compressor none is
// registered for (newClientStreamWithParams). Neither side's stats
// handler hears of it, no handler runs, and of its call options only
// grpc.OnFinish hears of it (newClientStream's endOfClientStream), once;
// grpc.Header, grpc.Trailer and grpc.Peer keep what they held. Each side
// is told after its server's GracefulStop, which waits for any handler.
func TestStatsNotBegunAsGRPC(t *testing.T) {
	for _, e := range []struct {
		name string
		ctx  func(t *testing.T) context.Context
		opts []grpc.CallOption
	}{
		{"context-cancelled", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			return ctx
		}, nil},
		{"context-deadline", func(t *testing.T) context.Context {
			ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx
		}, nil},
		{"metadata-invalid", func(t *testing.T) context.Context {
			return metadata.AppendToOutgoingContext(timeoutCtx(t), "no spaces", "v")
		}, nil},
		{"compressor-unknown", timeoutCtx, []grpc.CallOption{grpc.UseCompressor("nosuch")}},
	} {
		for _, kind := range echoKinds {
			t.Run(e.name+"/"+kind.name, func(t *testing.T) {
				var ran atomic.Int32
				srv := ctxHandlers(func(context.Context) error {
					ran.Add(1)
					return nil
				})
				// tell makes the call, stops the server, and says what
				// the call returned and what each side heard of it.
				tell := func(t *testing.T, c echov1.EchoClient, stop func(), cs, ss *kindsRecorder) string {
					var mu sync.Mutex
					var finished []codes.Code
					header, trailer := metadata.Pairs("before", "call"), metadata.Pairs("before", "call")
					var p peer.Peer
					opts := append([]grpc.CallOption{grpc.Header(&header), grpc.Trailer(&trailer), grpc.Peer(&p), grpc.OnFinish(func(err error) {
						mu.Lock()
						defer mu.Unlock()
						finished = append(finished, status.Code(err))
					})}, e.opts...)
					err := kind.call(e.ctx(t), c, opts...)
					stop()
					mu.Lock()
					defer mu.Unlock()
					return fmt.Sprintf("code=%v on-finish=%v header=%v trailer=%v peer-set=%v client-heard=%v server-heard=%v handlers-ran=%d",
						status.Code(err), finished, keys(header), keys(trailer), p.Addr != nil, cs.drain(), ss.drain(), ran.Swap(0))
				}
				cs, ss := newKindsRecorder(), newKindsRecorder()
				gs, cc := realGRPCServer(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) },
					[]grpc.ServerOption{grpc.StatsHandler(ss)}, []grpc.DialOption{grpc.WithStatsHandler(cs)})
				want := tell(t, echov1.NewEchoClient(cc), gs.GracefulStop, cs, ss)
				t.Logf("grpc-go: %s", want)
				forEachMode(t, func(t *testing.T, m testMode) {
					cs, ss := newKindsRecorder(), newKindsRecorder()
					c, ch := newEcho(t, m, srv, inproc.WithClientStatsHandler(cs), inproc.WithServerStatsHandler(ss))
					if got := tell(t, c, ch.GracefulStop, cs, ss); got != want {
						t.Errorf("inproc: %s\ngrpc-go: %s", got, want)
					}
				})
			})
		}
	}
}

// TestStatsClientLeftAsGRPC: a client cancels while its handler waits
// for its context to end; the handler then returns. Over a socket the
// cancel reset the stream: grpc-go's server had marked it done before it
// ended the handler's context (http2_server.go closeStream), so nothing
// the handler writes afterwards goes out. A unary handler's response is
// written by the server after the handler returns (server.go
// wrapUnaryHandler), and writing it fails with the context's code: End
// says Canceled for a handler that returned a response (an error it
// returned is what End says), and there is no OutHeader, OutPayload or
// OutTrailer. A streaming handler that returns
// nil without writing leaves End with OK; one whose Send failed returns
// the Send's error. The client's End says Canceled, with no header or
// trailer. Inline handlers run on the client's goroutine, yet their
// events are the same.
func TestStatsClientLeftAsGRPC(t *testing.T) {
	running := make(chan struct{}, 1)
	srv := &funcEcho{
		get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			running <- struct{}{}
			<-ctx.Done()
			if req.GetText() == "fail" {
				return nil, status.Error(codes.NotFound, "no")
			}
			return &echov1.EchoResponse{Text: req.GetText()}, nil
		},
		expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			running <- struct{}{}
			<-s.Context().Done()
			if req.GetText() == "send" {
				return s.Send(&echov1.EchoResponse{Text: req.GetText()})
			}
			return nil
		},
	}
	for _, c := range []struct {
		name   string
		stream bool   // Expand, else Get
		text   string // what the handler returns: see srv
	}{
		{"unary", false, "hi"},
		{"unary-error", false, "fail"},
		{"server-stream", true, "hi"},
		{"server-stream-send", true, "send"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want grpcSides
			statsSides(t, srv, func(t *testing.T, ec echov1.EchoClient) {
				ctx, cancel := context.WithCancel(timeoutCtx(t))
				go func() {
					select {
					case <-running: // an Inline unary handler runs on this test's goroutine
					case <-ctx.Done():
					}
					cancel()
				}()
				req := &echov1.EchoRequest{Text: c.text}
				var err error
				if c.stream {
					var s grpc.ServerStreamingClient[echov1.EchoResponse]
					if s, err = ec.Expand(ctx, req); err == nil {
						_, err = echotest.RecvAll(s.Recv)
					}
				} else {
					_, err = ec.Get(ctx, req)
				}
				wantCode(t, "the call", err, codes.Canceled)
			}, func(t *testing.T, client, server []string, grpcgo bool) {
				if grpcgo {
					if hasEvent(server, "OutHeader") || hasEvent(server, "OutPayload") || hasEvent(server, "OutTrailer") {
						oracleFail(t, grpcgo, "the server's stats handler saw something sent after the client left: %v", server)
					}
					want = grpcSides{client, server}
					return
				}
				want.same(t, client, server)
			})
		})
	}
}

// TestStatsClientOutHeaderAsGRPC: the client's OutHeader. grpc-go's
// (http2_client.go NewStream) is the context's outgoing metadata with the
// user-agent set, without what per-RPC credentials add, and its
// Authority is the :authority the call sends (the harness compares it,
// here as grpc.CallAuthority sets it).
func TestStatsClientOutHeaderAsGRPC(t *testing.T) {
	srv := &funcEcho{}
	for _, c := range []struct {
		name string
		opts []grpc.CallOption
	}{
		{"default-authority", nil},
		{"call-authority", []grpc.CallOption{grpc.CallAuthority("elsewhere.example")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			statsSides(t, srv, func(t *testing.T, ec echov1.EchoClient) {
				ctx := metadata.AppendToOutgoingContext(timeoutCtx(t), "users-own", "v")
				opts := append([]grpc.CallOption{grpc.PerRPCCredentials(tokenCreds{token: "t"})}, c.opts...)
				if _, err := ec.Get(ctx, &echov1.EchoRequest{}, opts...); err != nil {
					t.Fatal(err)
				}
			}, func(t *testing.T, client, _ []string, grpcgo bool) {
				if !slices.Contains(client, "OutHeader[user-agent users-own]") {
					oracleFail(t, grpcgo, "the client's OutHeader is not [user-agent users-own]: %v", client)
				}
			})
		})
	}
}

// trailingEcho answers each kind of call as echo.Server does, having set
// a header and a trailer.
var trailingEcho = &funcEcho{
	get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		if err := grpc.SetHeader(ctx, metadata.Pairs("set-header", "h")); err != nil {
			return nil, err
		}
		if err := grpc.SetTrailer(ctx, metadata.Pairs("set-trailer", "t")); err != nil {
			return nil, err
		}
		return echo.Server{}.Get(ctx, req)
	},
	expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
		return setHeaderTrailer(s, func() error { return echo.Server{}.Expand(req, s) })
	},
	collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		return setHeaderTrailer(s, func() error { return echo.Server{}.Collect(s) })
	},
	update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		return setHeaderTrailer(s, func() error { return echo.Server{}.Update(s) })
	},
}

// setHeaderTrailer sets trailingEcho's header and trailer on s, then
// serves the call with serve.
func setHeaderTrailer(s grpc.ServerStream, serve func() error) error {
	if err := s.SetHeader(metadata.Pairs("set-header", "h")); err != nil {
		return err
	}
	s.SetTrailer(metadata.Pairs("set-trailer", "t"))
	return serve()
}

// TestStatsFieldsAsGRPC: calls of each kind whose client sends metadata
// and whose handler sets a header and a trailer, failing fast or waiting
// for ready, and a call whose status has details. Each side's stats
// handler sees the events grpc-go's sees, whatever their order (other
// tests judge orders), and the harness compares their fields.
func TestStatsFieldsAsGRPC(t *testing.T) {
	type fieldsCase struct {
		name string
		srv  echov1.EchoServer
		call func(ctx context.Context, c echov1.EchoClient) error
	}
	var cases []fieldsCase
	for _, o := range []struct {
		name string
		opts []grpc.CallOption
	}{
		{"fail-fast", nil},
		{"wait-for-ready", []grpc.CallOption{grpc.WaitForReady(true)}},
	} {
		for _, kind := range textKinds {
			cases = append(cases, fieldsCase{o.name + "/" + kind.name, trailingEcho, func(ctx context.Context, c echov1.EchoClient) error {
				_, err := kind.call(ctx, c, "hello", o.opts...)
				return err
			}})
		}
	}
	detailed := &funcEcho{get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		st, err := status.New(codes.NotFound, "no").WithDetails(&echov1.EchoRequest{Text: "detail"})
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}}
	cases = append(cases, fieldsCase{"status-details", detailed, func(ctx context.Context, c echov1.EchoClient) error {
		_, err := c.Get(ctx, &echov1.EchoRequest{})
		if status.Code(err) == codes.NotFound {
			return nil
		}
		return fmt.Errorf("Get: %v, want NotFound", err)
	}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want grpcSides
			statsSides(t, c.srv, func(t *testing.T, ec echov1.EchoClient) {
				ctx := metadata.AppendToOutgoingContext(timeoutCtx(t), "users-own", "v")
				if err := c.call(ctx, ec); err != nil {
					t.Fatal(err)
				}
			}, func(t *testing.T, client, server []string, grpcgo bool) {
				client, server = slices.Sorted(slices.Values(client)), slices.Sorted(slices.Values(server))
				if grpcgo {
					want = grpcSides{client, server}
					return
				}
				want.same(t, client, server)
			})
		})
	}
}

// TestStatsServerInHeaderFirstAsGRPC: grpc-go's server transport reports
// InHeader as it reads the request's headers, before the server reports
// Begin; inproc reports Begin first.
func TestStatsServerInHeaderFirstAsGRPC(t *testing.T) {
	statsSides(t, &funcEcho{}, func(t *testing.T, c echov1.EchoClient) {
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, _, server []string, grpcgo bool) {
		if !hasEvent(server[:1], "InHeader") {
			oracleFail(t, grpcgo, "the server's first stats event is not InHeader: %v", server)
		}
	})
}

// TestStatsUnaryOrderAsGRPC: the events of a unary call whose handler
// answers. grpc-go's server writes the header before the response
// (http2_server.go write calls writeHeader) and reports the response once
// written (server.go sendResponse): OutHeader, then OutPayload. A response
// over the client's receive limit is checked by the client alone, so the
// server's events are the same; there both sides are compared whole, as
// they go when the trailer reaches the client before the reset its
// failure sends reaches the server.
//
// In the call that ends well, grpc-go's client reports InTrailer and the
// response's InPayload in either order (see usualOrder): its events are
// accepted in both, and inproc's must be in the usual one. Its client
// reports the request's OutPayload once written, and the response's
// InHeader as its transport reads it: the header comes after the
// OutPayload unless the caller stalls between writing and reporting, and
// grpc-go runs again until it did.
func TestStatsUnaryOrderAsGRPC(t *testing.T) {
	long := &funcEcho{get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		return &echov1.EchoResponse{Text: strings.Repeat("x", 100)}, nil
	}}
	trailerCame := func(client, server []string) bool {
		return hasEvent(client, "InTrailer") && hasEvent(server, "OutTrailer")
	}
	for _, c := range []struct {
		name    string
		opts    []grpc.CallOption
		code    codes.Code
		settled func(client, server []string) bool
	}{
		{"ends-well", nil, codes.OK, requestFirst},
		{"over-client-recv-limit", []grpc.CallOption{grpc.MaxCallRecvMsgSize(10)}, codes.ResourceExhausted, func(client, server []string) bool {
			return requestFirst(client, server) && trailerCame(client, server)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want grpcSides
			statsConns(t, statsServer{impl: long}, newKindsRecorder, c.settled, func(t *testing.T, cc grpc.ClientConnInterface) {
				_, err := echov1.NewEchoClient(cc).Get(timeoutCtx(t), &echov1.EchoRequest{Text: "x"}, c.opts...)
				wantCode(t, "Get", err, c.code)
			}, func(t *testing.T, client, server []string, grpcgo bool) {
				if grpcgo {
					if i := slices.Index(server, "OutHeader[]"); i < 0 || i+1 >= len(server) || server[i+1] != "OutPayload" {
						oracleFail(t, grpcgo, "the server's OutHeader is not followed by its OutPayload: %v", server)
					}
					want = grpcSides{usualOrder(client), server}
					if c.code == codes.OK && !slices.Equal(want.client[len(want.client)-3:], []string{"InTrailer[]", "InPayload", "End{OK}"}) {
						oracleFail(t, grpcgo, "the client's events end in neither order of InTrailer and InPayload: %v", client)
					}
					return
				}
				want.same(t, client, server)
			})
		})
	}
}

// requestFirst says whether a client reported its request's OutPayload
// before anything of the answer. grpc-go's client reports the request once
// written, so the answer comes first only if the caller stalls between
// the two.
func requestFirst(client, _ []string) bool {
	answer := slices.IndexFunc(client, func(e string) bool {
		return strings.HasPrefix(e, "InHeader") || strings.HasPrefix(e, "InTrailer")
	})
	return answer < 0 || slices.Index(client, "OutPayload") < answer
}

// TestStatsServerSendLimitAsGRPC: a handler's response over the server's
// send limit (grpc.MaxSendMsgSize; WithServerMaxSendMsgSize). grpc-go's
// server checks the size before it writes anything (stream.go
// serverStream.SendMsg), then writes the status: behind the header the
// handler set, if it set one, or alone, trailers only (http2_server.go
// writeStatus). Its client then gets no header but one set, and the
// content-type in the trailer of a response of trailers only; its stats
// handler hears no InHeader but of a header set. A unary call goes with
// and without a server stats handler: without one, inproc checks a unary
// response on the client's goroutine. The client's error message is
// grpc-go's server's (stream.go serverStream.SendMsg).
func TestStatsServerSendLimitAsGRPC(t *testing.T) {
	const limit = 10
	big := &echov1.EchoResponse{Text: strings.Repeat("x", 2*limit)}
	srv := statsServer{
		impl: &funcEcho{
			get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
				if req.GetText() == "set-header" {
					if err := grpc.SetHeader(ctx, metadata.Pairs("set-header", "h")); err != nil {
						return nil, err
					}
				}
				return big, nil
			},
			expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				if req.GetText() == "set-header" {
					if err := s.SetHeader(metadata.Pairs("set-header", "h")); err != nil {
						return err
					}
				}
				return s.Send(big)
			},
		},
		grpcOpts: []grpc.ServerOption{grpc.MaxSendMsgSize(limit)},
		opts:     []inproc.Option{inproc.WithServerMaxSendMsgSize(limit)},
	}
	type limitCase struct {
		name      string
		stream    bool
		text      string
		newServer func() *kindsRecorder
	}
	var cases []limitCase
	for _, text := range []string{"no-header", "set-header"} {
		cases = append(cases,
			limitCase{"unary/" + text, false, text, newKindsRecorder},
			limitCase{"unary/" + text + "/no-server-stats", false, text, noServerStats},
			limitCase{"server-stream/" + text, true, text, newKindsRecorder})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var md, wantMD string // the keys of the client's header and trailer
			var want grpcSides
			statsConns(t, srv, c.newServer, requestFirst, func(t *testing.T, cc grpc.ClientConnInterface) {
				ec := echov1.NewEchoClient(cc)
				var header, trailer metadata.MD
				var err error
				if c.stream {
					var s grpc.ServerStreamingClient[echov1.EchoResponse]
					if s, err = ec.Expand(timeoutCtx(t), &echov1.EchoRequest{Text: c.text}); err != nil {
						t.Fatal(err)
					}
					if header, err = s.Header(); err != nil {
						t.Fatal(err)
					}
					_, err = echotest.RecvAll(s.Recv)
					trailer = s.Trailer()
				} else {
					_, err = ec.Get(timeoutCtx(t), &echov1.EchoRequest{Text: c.text}, grpc.Header(&header), grpc.Trailer(&trailer))
				}
				wantCode(t, "the call", err, codes.ResourceExhausted)
				// The message too: grpc-go's, as its server writes it.
				md = fmt.Sprintf("header %v, trailer %v, message %q", keys(header), keys(trailer), status.Convert(err).Message())
			}, func(t *testing.T, client, server []string, grpcgo bool) {
				if grpcgo {
					wantMD, want = md, grpcSides{client, server}
					return
				}
				if md != wantMD {
					t.Errorf("the client got %s; grpc-go's %s", md, wantMD)
				}
				want.same(t, client, server)
			})
		})
	}
}

// usualOrder is a unary call's client events with an InPayload right
// before the InTrailer put after it. grpc-go's client reports InTrailer as
// its transport's reader goroutine reads the trailer (http2_client.go
// operateHeaders), and the response's InPayload on the caller's goroutine
// once the reader handed it the message (stream.go recvMsg), before it
// reads again for the trailer: either may come first. The trailer most
// often does: the reader goes on to the trailer's frame, right behind the
// response's, before the caller it woke runs. The caller goes first only
// when it runs at once on another processor and the trailer's frame is
// not read yet (once in 2,000 calls with both CPUs of a 2-CPU machine
// busy; never otherwise). inproc's order does not depend on goroutines,
// and it gives the usual one.
func usualOrder(client []string) []string {
	out := slices.Clone(client)
	if i := slices.Index(out, "InPayload"); i >= 0 && i+1 < len(out) && out[i+1] == "InTrailer[]" {
		out[i], out[i+1] = out[i+1], out[i]
	}
	return out
}

// TestStatsUnknownMethodAsGRPC: a call to a method the server does not
// have. grpc-go's server (server.go handleStream) reports the request's
// header, then writes the status, trailers only, without beginning a
// call: its stats handler sees InHeader and OutTrailer, and no Begin, no
// End. A malformed name it refuses before it reports the header: only
// OutTrailer. Its client sees what a call that fails with trailers only
// shows: Begin, OutHeader, OutPayload for the request it sent, InTrailer
// with the content-type, and End with Unimplemented; that is, unless the
// status reaches it before it sends the request, which only a client
// goroutine stalled between the two lets happen.
func TestStatsUnknownMethodAsGRPC(t *testing.T) {
	sentFirst := func(client, _ []string) bool {
		return len(client) >= 3 && slices.Equal(client[len(client)-3:], []string{"OutPayload", "InTrailer[content-type]", "End{Unimplemented}"})
	}
	for _, name := range []struct{ name, method string }{
		{"unknown-service", "/nosuch.v1.Service/Get"},
		{"unknown-method", "/echo.v1.Echo/Nope"},
		{"malformed", "nosuch"},
		{"malformed-without-leading-slash", "nosuch.v1.Service/Get"},
	} {
		for _, desc := range []struct {
			name string
			desc *grpc.StreamDesc // nil: unary
		}{
			{"unary", nil},
			{"server-stream", &grpc.StreamDesc{ServerStreams: true}},
			{"client-stream", &grpc.StreamDesc{ClientStreams: true}},
			{"bidi", &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}},
		} {
			t.Run(name.name+"/"+desc.name, func(t *testing.T) {
				var want grpcSides
				statsConns(t, statsServer{impl: &funcEcho{}}, recorderUntil[*stats.OutTrailer], sentFirst, func(t *testing.T, cc grpc.ClientConnInterface) {
					err := callOnce(timeoutCtx(t), cc, desc.desc, name.method)
					wantCode(t, "the call", err, codes.Unimplemented)
				}, func(t *testing.T, client, server []string, grpcgo bool) {
					if grpcgo {
						if hasEvent(server, "Begin") || hasEvent(server, "End") {
							oracleFail(t, grpcgo, "the server's stats handler saw the call begin or end: %v", server)
						}
						want = grpcSides{client, server}
						return
					}
					want.same(t, client, server)
				})
			})
		}
	}
}

// TestStatsClientSendLimitAsGRPC: a request over the client's send limit
// (grpc.MaxCallSendMsgSize). grpc-go's client sends the call's header
// before it encodes the request (stream.go newClientStream, then
// SendMsg), then fails the call and resets the stream. So its server's
// stats handler hears the header, the call's begin, and its end with
// Canceled: the handler, waiting for the request, fails with its context
// before any of its code runs. The client's error is grpc-go's, code and
// message (which the server's send limit shares). Each side is told after
// its server's GracefulStop, which waits for the server's side of the call.
func TestStatsClientSendLimitAsGRPC(t *testing.T) {
	for _, kind := range textKinds {
		t.Run(kind.name, func(t *testing.T) {
			var ran atomic.Int32
			srv := shapeEcho(func(string) string {
				ran.Add(1)
				return "ok"
			})
			tell := func(t *testing.T, c echov1.EchoClient, stop func(), cs, ss *kindsRecorder) (string, string) {
				_, err := kind.call(timeoutCtx(t), c, strings.Repeat("x", 20), grpc.MaxCallSendMsgSize(5))
				stop()
				return fmt.Sprintf("code=%v client-heard=%v server-heard=%v handlers-answered=%d",
					status.Code(err), cs.drain(), ss.drain(), ran.Swap(0)), status.Convert(err).Message()
			}
			cs, ss := newKindsRecorder(), newKindsRecorder()
			gs, cc := realGRPCServer(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) },
				[]grpc.ServerOption{grpc.StatsHandler(ss)}, []grpc.DialOption{grpc.WithStatsHandler(cs)})
			want, wantMsg := tell(t, echov1.NewEchoClient(cc), gs.GracefulStop, cs, ss)
			t.Logf("grpc-go: %s", want)
			forEachMode(t, func(t *testing.T, m testMode) {
				cs, ss := newKindsRecorder(), newKindsRecorder()
				c, ch := newEcho(t, m, srv, inproc.WithClientStatsHandler(cs), inproc.WithServerStatsHandler(ss))
				got, gotMsg := tell(t, c, ch.GracefulStop, cs, ss)
				if got != want {
					t.Errorf("inproc: %s\ngrpc-go: %s", got, want)
				}
				if gotMsg != wantMsg {
					t.Errorf("inproc's message %q; grpc-go's %q", gotMsg, wantMsg)
				}
			})
		})
	}
}

// TestStatsServerSendLimitHandlerErrorAsGRPC: a handler whose Send fails
// over the server's send limit, and that then returns an error of its
// own, or none. grpc-go's server writes the Send's status at once
// (stream.go serverStream.SendMsg), which the client gets, but its stats
// handler's End reports what the handler returned (server.go
// processRPC), not the status that went out.
func TestStatsServerSendLimitHandlerErrorAsGRPC(t *testing.T) {
	const limit = 10
	big := &echov1.EchoResponse{Text: strings.Repeat("x", 2*limit)}
	for _, ret := range []struct {
		name string
		err  error
	}{
		{"status", status.Error(codes.FailedPrecondition, "mine")},
		{"plain-error", fmt.Errorf("mine")},
		{"nil", nil},
	} {
		sendThen := func(send func(*echov1.EchoResponse) error) error {
			if err := send(big); err == nil {
				return status.Error(codes.Internal, "the Send over the limit passed")
			}
			return ret.err
		}
		srv := statsServer{
			impl: &funcEcho{
				expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					return sendThen(s.Send)
				},
				update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
					if _, err := s.Recv(); err != nil {
						return err
					}
					return sendThen(s.Send)
				},
			},
			grpcOpts: []grpc.ServerOption{grpc.MaxSendMsgSize(limit)},
			opts:     []inproc.Option{inproc.WithServerMaxSendMsgSize(limit)},
		}
		for _, bidi := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bidi=%v", ret.name, bidi), func(t *testing.T) {
				var want grpcSides
				statsConns(t, srv, newKindsRecorder, requestFirst, func(t *testing.T, cc grpc.ClientConnInterface) {
					c := echov1.NewEchoClient(cc)
					var err error
					if bidi {
						var s grpc.BidiStreamingClient[echov1.EchoRequest, echov1.EchoResponse]
						if s, err = c.Update(timeoutCtx(t)); err != nil {
							t.Fatal(err)
						}
						if err := s.Send(&echov1.EchoRequest{}); err != nil {
							t.Fatal(err)
						}
						_, err = s.Recv()
					} else {
						var s grpc.ServerStreamingClient[echov1.EchoResponse]
						if s, err = c.Expand(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
							t.Fatal(err)
						}
						_, err = echotest.RecvAll(s.Recv)
					}
					wantCode(t, "the call", err, codes.ResourceExhausted)
				}, func(t *testing.T, client, server []string, grpcgo bool) {
					if grpcgo {
						want = grpcSides{client, server}
						return
					}
					want.same(t, client, server)
				})
			})
		}
	}
}

// TestStatsOutTrailerDetailsAsGRPC: a handler that sets
// grpc-status-details-bin in its trailer itself and ends with a status.
// A status with details takes that key for their encoding: grpc-go's
// server deletes the handler's before it reports the trailer to its
// stats handler (http2_server.go writeStatus), even if protobuf then
// fails to encode the status; one without details leaves the handler's.
// grpc-go runs again where its client reported the answer before its
// request (see requestFirst).
func TestStatsOutTrailerDetailsAsGRPC(t *testing.T) {
	bin := func(t *testing.T) string {
		st, err := status.New(codes.NotFound, "from-bin").WithDetails(&echov1.EchoRequest{Text: "bin"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(st.Proto())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		name string
		err  func(t *testing.T) error
	}{
		{"details", func(t *testing.T) error {
			st, err := status.New(codes.NotFound, "mine").WithDetails(&echov1.EchoRequest{Text: "handler"})
			if err != nil {
				t.Fatal(err)
			}
			return st.Err()
		}},
		{"no-details", func(*testing.T) error { return status.Error(codes.NotFound, "mine") }},
		{"unencodable-details", func(*testing.T) error {
			return status.ErrorProto(&spb.Status{Code: int32(codes.NotFound), Message: "mine",
				Details: []*anypb.Any{{TypeUrl: "\xff", Value: []byte{1}}}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			trailer := metadata.Pairs("grpc-status-details-bin", bin(t), "t", "v")
			end := c.err(t)
			srv := &funcEcho{
				get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
					if err := grpc.SetTrailer(ctx, trailer); err != nil {
						return nil, err
					}
					return nil, end
				},
				expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					s.SetTrailer(trailer)
					return end
				},
			}
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
					var want grpcSides
					statsConns(t, statsServer{impl: srv}, newKindsRecorder, requestFirst, func(t *testing.T, cc grpc.ClientConnInterface) {
						c := echov1.NewEchoClient(cc)
						if !stream {
							_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{})
							wantCode(t, "Get", err, codes.NotFound)
							return
						}
						s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
						if err != nil {
							t.Fatal(err)
						}
						_, err = echotest.RecvAll(s.Recv)
						wantCode(t, "Expand", err, codes.NotFound)
					}, func(t *testing.T, client, server []string, grpcgo bool) {
						if grpcgo {
							want = grpcSides{client, server}
							return
						}
						want.same(t, client, server)
					})
				})
			}
		})
	}
}
