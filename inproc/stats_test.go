package inproc_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// statsRecorder is a stats.Handler that keeps every event of every call,
// by the tag TagRPC gave the call.
type statsRecorder struct {
	mu    sync.Mutex
	calls []*rpcEvents
	ends  chan *rpcEvents // each call, at its End
}

type rpcEvents struct {
	method   string // from TagRPC
	untagged int    // events whose context TagRPC did not tag
	events   []stats.RPCStats
}

type rpcTagKey struct{}

func newStatsRecorder() *statsRecorder { return &statsRecorder{ends: make(chan *rpcEvents, 16)} }

func (r *statsRecorder) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	e := &rpcEvents{method: info.FullMethodName}
	r.mu.Lock()
	r.calls = append(r.calls, e)
	r.mu.Unlock()
	return context.WithValue(ctx, rpcTagKey{}, e)
}

func (r *statsRecorder) HandleRPC(ctx context.Context, s stats.RPCStats) {
	e, ok := ctx.Value(rpcTagKey{}).(*rpcEvents)
	r.mu.Lock()
	if !ok {
		e = &rpcEvents{untagged: 1}
		r.calls = append(r.calls, e)
	}
	e.events = append(e.events, s)
	r.mu.Unlock()
	if _, end := s.(*stats.End); end {
		r.ends <- e
	}
}

func (*statsRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*statsRecorder) HandleConn(context.Context, stats.ConnStats)                       {}

// take waits for one call's End and returns all the calls recorded.
func (r *statsRecorder) take(t *testing.T, side string) []*rpcEvents {
	t.Helper()
	receive(t, r.ends, side+"'s stats End")
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

// statsEcho is an Echo server that fails Get of "fail" with NotFound, and
// ends Expand with Aborted at the word "fail".
var statsEcho = &funcEcho{
	get: func(_ context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		if req.GetText() == "fail" {
			return nil, status.Error(codes.NotFound, "no fail here")
		}
		return &echov1.EchoResponse{Text: req.GetText()}, nil
	},
	expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
		for _, w := range strings.Fields(req.GetText()) {
			if w == "fail" {
				return status.Error(codes.Aborted, "stopped at fail")
			}
			if err := s.Send(&echov1.EchoResponse{Text: w}); err != nil {
				return err
			}
		}
		return nil
	},
}

// TestStatsHandlers checks what client and server stats handlers see of
// each call: one TagRPC with the method's name, Begin first with the
// method's kind, one InPayload and OutPayload per message with its size,
// End last with the call's error.
func TestStatsHandlers(t *testing.T) {
	cases := []struct {
		name         string
		method       string
		clientStream bool
		serverStream bool
		call         func(ctx context.Context, c echov1.EchoClient) error
		requests     []string
		responses    []string
		wantCode     codes.Code
		wantMsg      string
	}{
		{"unary", echov1.Echo_Get_FullMethodName, false, false, func(ctx context.Context, c echov1.EchoClient) error {
			_, err := c.Get(ctx, &echov1.EchoRequest{Text: "hi"})
			return err
		}, []string{"hi"}, []string{"hi"}, codes.OK, ""},
		{"unary/error", echov1.Echo_Get_FullMethodName, false, false, func(ctx context.Context, c echov1.EchoClient) error {
			_, err := c.Get(ctx, &echov1.EchoRequest{Text: "fail"})
			return err
		}, []string{"fail"}, nil, codes.NotFound, "no fail here"},
		{"server-stream", echov1.Echo_Expand_FullMethodName, false, true, func(ctx context.Context, c echov1.EchoClient) error {
			s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "a b c"})
			if err != nil {
				return err
			}
			_, err = echotest.RecvAll(s.Recv)
			return err
		}, []string{"a b c"}, []string{"a", "b", "c"}, codes.OK, ""},
		{"server-stream/error", echov1.Echo_Expand_FullMethodName, false, true, func(ctx context.Context, c echov1.EchoClient) error {
			s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "a fail c"})
			if err != nil {
				return err
			}
			_, err = echotest.RecvAll(s.Recv)
			return err
		}, []string{"a fail c"}, []string{"a"}, codes.Aborted, "stopped at fail"},
		{"client-stream", echov1.Echo_Collect_FullMethodName, true, false, func(ctx context.Context, c echov1.EchoClient) error {
			s, err := c.Collect(ctx)
			if err != nil {
				return err
			}
			for _, w := range []string{"x", "yy"} {
				if err := s.Send(&echov1.EchoRequest{Text: w}); err != nil {
					return err
				}
			}
			_, err = s.CloseAndRecv()
			return err
		}, []string{"x", "yy"}, []string{"x yy"}, codes.OK, ""},
		{"bidi", echov1.Echo_Update_FullMethodName, true, true, func(ctx context.Context, c echov1.EchoClient) error {
			s, err := c.Update(ctx)
			if err != nil {
				return err
			}
			for _, w := range []string{"p", "qq", "rrr"} {
				if err := s.Send(&echov1.EchoRequest{Text: w}); err != nil {
					return err
				}
				if _, err := s.Recv(); err != nil {
					return err
				}
			}
			if err := s.CloseSend(); err != nil {
				return err
			}
			_, err = echotest.RecvAll(s.Recv)
			return err
		}, []string{"p", "qq", "rrr"}, []string{"p", "qq", "rrr"}, codes.OK, ""},
	}
	check := func(t *testing.T, c echov1.EchoClient, cr, sr *statsRecorder) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.call(timeoutCtx(t), c)
				wantCode(t, "call", err, tc.wantCode)
				for _, side := range []struct {
					name    string
					r       *statsRecorder
					client  bool
					in, out []string
				}{
					{"client", cr, true, tc.responses, tc.requests},
					{"server", sr, false, tc.requests, tc.responses},
				} {
					calls := side.r.take(t, side.name)
					if len(calls) != 1 || calls[0].untagged != 0 {
						t.Fatalf("%s stats handler saw %d calls (untagged events: %v), want 1 tagged", side.name, len(calls), calls)
					}
					e := calls[0]
					if e.method != tc.method {
						t.Errorf("%s TagRPC got method %q, want %q", side.name, e.method, tc.method)
					}
					checkEvents(t, side.name, e.events, side.client, tc.clientStream, tc.serverStream, side.in, side.out, tc.wantCode, tc.wantMsg)
				}
			})
		}
	}
	// The same checks hold for grpc-go, the reference.
	t.Run("reference=grpc-go", func(t *testing.T) {
		cr, sr := newStatsRecorder(), newStatsRecorder()
		cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, statsEcho) },
			[]grpc.ServerOption{grpc.StatsHandler(sr)}, []grpc.DialOption{grpc.WithStatsHandler(cr)})
		check(t, echov1.NewEchoClient(cc), cr, sr)
	})
	forEachMode(t, func(t *testing.T, m testMode) {
		cr, sr := newStatsRecorder(), newStatsRecorder()
		c, _ := newEcho(t, m, statsEcho, inproc.WithClientStatsHandler(cr), inproc.WithServerStatsHandler(sr))
		check(t, c, cr, sr)
	})
}

func checkEvents(t *testing.T, side string, events []stats.RPCStats, client, clientStream, serverStream bool, in, out []string, code codes.Code, msg string) {
	t.Helper()
	if len(events) < 2 {
		t.Fatalf("%s saw events %v, want at least Begin and End", side, describe(events))
	}
	end, ok := events[len(events)-1].(*stats.End)
	if !ok {
		t.Fatalf("%s's last event is %T, want *stats.End; events: %v", side, events[len(events)-1], describe(events))
	}
	// Begin comes before any payload (grpc-go's server reports the
	// incoming header first), End last; one of each.
	var begin *stats.Begin
	for _, ev := range events {
		if b, ok := ev.(*stats.Begin); ok {
			begin = b
			break
		}
		switch ev.(type) {
		case *stats.InPayload, *stats.OutPayload, *stats.End:
			t.Fatalf("%s saw %T before Begin; events: %v", side, ev, describe(events))
		}
	}
	if begin == nil {
		t.Fatalf("%s saw no Begin; events: %v", side, describe(events))
	}
	if begin.IsClientStream != clientStream || begin.IsServerStream != serverStream {
		t.Errorf("%s Begin says client-stream=%v server-stream=%v, want %v %v", side, begin.IsClientStream, begin.IsServerStream, clientStream, serverStream)
	}
	if code == codes.OK {
		if end.Error != nil {
			t.Errorf("%s End.Error = %v, want nil", side, end.Error)
		}
	} else if st := status.Convert(end.Error); end.Error == nil || st.Code() != code || st.Message() != msg {
		t.Errorf("%s End.Error = %v, want code %v message %q", side, end.Error, code, msg)
	}
	var gotIn, gotOut []string
	for _, ev := range events {
		if ev.IsClient() != client {
			t.Errorf("%s event %T has IsClient() = %v", side, ev, ev.IsClient())
		}
		var payload any
		var length int
		switch ev := ev.(type) {
		case *stats.InPayload:
			payload, length = ev.Payload, ev.Length
			gotIn = append(gotIn, text(ev.Payload))
		case *stats.OutPayload:
			payload, length = ev.Payload, ev.Length
			gotOut = append(gotOut, text(ev.Payload))
		case *stats.Begin:
			if ev != begin {
				t.Errorf("%s saw a second Begin: %v", side, describe(events))
			}
		case *stats.End:
			if ev != end {
				t.Errorf("%s saw a second End: %v", side, describe(events))
			}
		}
		if payload != nil {
			if want := proto.Size(payload.(proto.Message)); length != want {
				t.Errorf("%s %T of %q has Length %d, want %d", side, ev, text(payload), length, want)
			}
		}
	}
	if !slices.Equal(gotIn, in) {
		t.Errorf("%s InPayloads %q, want %q", side, gotIn, in)
	}
	if !slices.Equal(gotOut, out) {
		t.Errorf("%s OutPayloads %q, want %q", side, gotOut, out)
	}
}

func describe(events []stats.RPCStats) []string {
	var d []string
	for _, e := range events {
		d = append(d, fmt.Sprintf("%T", e))
	}
	return d
}

// payloadRecorder records the lengths of every payload event.
type payloadRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *payloadRecorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (r *payloadRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (r *payloadRecorder) HandleConn(context.Context, stats.ConnStats) {}
func (r *payloadRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	var e string
	switch s := s.(type) {
	case *stats.InPayload:
		e = fmt.Sprintf("client=%v in length=%d compressed=%d wire=%d", s.Client, s.Length, s.CompressedLength, s.WireLength)
	case *stats.OutPayload:
		e = fmt.Sprintf("client=%v out length=%d compressed=%d wire=%d", s.Client, s.Length, s.CompressedLength, s.WireLength)
	default:
		return
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *payloadRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := slices.Clone(r.events)
	slices.Sort(e)
	r.events = nil
	return e
}

// TestStatsCompressedLength: grpc-go's payload events carry
// CompressedLength (equal to Length without compression); grpc-go's own
// OpenTelemetry plugin (google.golang.org/grpc/stats/opentelemetry)
// records grpc.*.sent/rcvd_total_compressed_message_size from it. inproc
// leaves it 0.
func TestStatsCompressedLength(t *testing.T) {
	ref := &payloadRecorder{}
	cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, &funcEcho{}) },
		[]grpc.ServerOption{grpc.StatsHandler(ref)}, []grpc.DialOption{grpc.WithStatsHandler(ref)})
	call := func(c echov1.EchoClient) {
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	call(echov1.NewEchoClient(cc))
	want := ref.take()
	forEachMode(t, func(t *testing.T, m testMode) {
		rec := &payloadRecorder{}
		c, _ := newEcho(t, m, &funcEcho{}, inproc.WithServerStatsHandler(rec), inproc.WithClientStatsHandler(rec))
		call(c)
		if got := rec.take(); !slices.Equal(got, want) {
			t.Errorf("payload events:\n got %q\nwant %q (grpc-go)", got, want)
		}
	})
}
