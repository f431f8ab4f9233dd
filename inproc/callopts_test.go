package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // so that grpc.UseCompressor("gzip") is valid
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// textKinds call each kind of method of echo.Server with one message of
// text (no spaces) and return what came back, which must be text again.
var textKinds = []struct {
	name string
	call func(ctx context.Context, c echov1.EchoClient, text string, opts ...grpc.CallOption) ([]string, error)
}{
	{"unary", func(ctx context.Context, c echov1.EchoClient, text string, opts ...grpc.CallOption) ([]string, error) {
		r, err := c.Get(ctx, &echov1.EchoRequest{Text: text}, opts...)
		if err != nil {
			return nil, err
		}
		return []string{r.GetText()}, nil
	}},
	{"server-stream", func(ctx context.Context, c echov1.EchoClient, text string, opts ...grpc.CallOption) ([]string, error) {
		s, err := c.Expand(ctx, &echov1.EchoRequest{Text: text}, opts...)
		if err != nil {
			return nil, err
		}
		return echotest.RecvAll(s.Recv)
	}},
	{"client-stream", func(ctx context.Context, c echov1.EchoClient, text string, opts ...grpc.CallOption) ([]string, error) {
		s, err := c.Collect(ctx, opts...)
		if err != nil {
			return nil, err
		}
		if err := s.Send(&echov1.EchoRequest{Text: text}); err != nil {
			return nil, err
		}
		r, err := s.CloseAndRecv()
		if err != nil {
			return nil, err
		}
		return []string{r.GetText()}, nil
	}},
	{"bidi", func(ctx context.Context, c echov1.EchoClient, text string, opts ...grpc.CallOption) ([]string, error) {
		s, err := c.Update(ctx, opts...)
		if err != nil {
			return nil, err
		}
		if err := s.Send(&echov1.EchoRequest{Text: text}); err != nil {
			return nil, err
		}
		if err := s.CloseSend(); err != nil {
			return nil, err
		}
		return echotest.RecvAll(s.Recv)
	}},
}

// TestMaxMessageSize checks grpc.MaxCallRecvMsgSize and
// grpc.MaxCallSendMsgSize at their boundary, for every kind of method, as
// grpc-go over bufconn does: a message of exactly the limit passes, one
// byte more gives ResourceExhausted.
func TestMaxMessageSize(t *testing.T) {
	text := strings.Repeat("x", 100)
	size := proto.Size(&echov1.EchoRequest{Text: text}) // the same for the response
	cases := []struct {
		name     string
		opt      grpc.CallOption
		wantCode codes.Code
	}{
		{"recv=size", grpc.MaxCallRecvMsgSize(size), codes.OK},
		{"recv=size-1", grpc.MaxCallRecvMsgSize(size - 1), codes.ResourceExhausted},
		{"send=size", grpc.MaxCallSendMsgSize(size), codes.OK},
		{"send=size-1", grpc.MaxCallSendMsgSize(size - 1), codes.ResourceExhausted},
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }, nil, nil))
	for _, tc := range cases {
		for _, kind := range textKinds {
			_, err := kind.call(timeoutCtx(t), ref, text, tc.opt)
			if status.Code(err) != tc.wantCode {
				t.Fatalf("reference: grpc-go gives %v for %s/%s, the test expects %v", err, tc.name, kind.name, tc.wantCode)
			}
		}
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, echo.Server{})
		for _, tc := range cases {
			for _, kind := range textKinds {
				t.Run(tc.name+"/"+kind.name, func(t *testing.T) {
					got, err := kind.call(timeoutCtx(t), c, text, tc.opt)
					if tc.wantCode != codes.OK {
						wantCode(t, "call", err, tc.wantCode)
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, []string{text}) {
						t.Errorf("got %q, want %q", got, text)
					}
				})
			}
		}
	})
}

// tokenCreds are per-RPC credentials that add an authorization header, or
// fail with err.
type tokenCreds struct {
	token string
	err   error
}

func (c tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if c.err != nil {
		return nil, c.err
	}
	return map[string]string{"Authorization": "Bearer " + c.token}, nil
}

func (tokenCreds) RequireTransportSecurity() bool { return false }

// TestPerRPCCredentials checks that grpc.PerRPCCredentials adds its
// metadata to what the handler receives, for every kind of method, and
// that its failures fail the call with the code grpc-go gives.
func TestPerRPCCredentials(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		seen := make(chan metadata.MD, 1)
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			md, _ := metadata.FromIncomingContext(ctx)
			seen <- md
			return nil
		}))
		for _, kind := range echoKinds {
			t.Run(kind.name, func(t *testing.T) {
				ctx := metadata.AppendToOutgoingContext(timeoutCtx(t), "other", "kept")
				if err := kind.call(ctx, c, grpc.PerRPCCredentials(tokenCreds{token: "t0k"})); err != nil {
					t.Fatal(err)
				}
				wantMD(t, "incoming metadata", receive(t, seen, "the handler"), metadata.MD{"authorization": {"Bearer t0k"}, "other": {"kept"}})
			})
		}
	})

	failures := []struct {
		name string
		err  error
	}{
		{"plain-error", errors.New("no token")},
		{"status-error", status.Error(codes.PermissionDenied, "not you")},
		{"restricted-status", status.Error(codes.NotFound, "no such token")},
	}
	ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }, nil, nil))
	want := map[string]codes.Code{}
	for _, f := range failures {
		want[f.name] = status.Code(echoKinds[0].call(timeoutCtx(t), ref, grpc.PerRPCCredentials(tokenCreds{err: f.err})))
		if want[f.name] == codes.OK {
			t.Fatalf("reference: grpc-go accepts failing credentials %v", f.err)
		}
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, echo.Server{})
		for _, f := range failures {
			for _, kind := range echoKinds {
				t.Run("failing/"+f.name+"/"+kind.name, func(t *testing.T) {
					err := kind.call(timeoutCtx(t), c, grpc.PerRPCCredentials(tokenCreds{err: f.err}))
					wantCode(t, "call with failing credentials (grpc-go's code)", err, want[f.name])
				})
			}
		}
	})
}

// TestOnFinish checks that grpc.OnFinish is called exactly once, when the
// call ends, with the call's error (nil for success), for every kind of
// method, whether the call succeeds, fails, or is cancelled.
func TestOnFinish(t *testing.T) {
	type outcome struct {
		name     string
		fail     bool // the handler fails
		cancel   bool // the client cancels
		wantCode codes.Code
	}
	outcomes := []outcome{
		{"ok", false, false, codes.OK},
		{"handler-error", true, false, codes.DataLoss},
		{"cancelled", false, true, codes.Canceled},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		var fail bool
		c, _ := newEcho(t, m, ctxHandlers(func(ctx context.Context) error {
			if fail {
				return status.Error(codes.DataLoss, "lost")
			}
			return nil
		}))
		for _, o := range outcomes {
			for _, kind := range echoKinds {
				t.Run(o.name+"/"+kind.name, func(t *testing.T) {
					fail = o.fail
					var mu sync.Mutex
					var calls []error
					onFinish := grpc.OnFinish(func(err error) {
						mu.Lock()
						calls = append(calls, err)
						mu.Unlock()
					})
					ctx, cancel := context.WithCancel(timeoutCtx(t))
					defer cancel()
					if o.cancel {
						cancel()
					}
					err := kind.call(ctx, c, onFinish)
					wantCode(t, "call", err, o.wantCode)
					mu.Lock()
					got := slices.Clone(calls)
					mu.Unlock()
					if len(got) != 1 {
						t.Fatalf("OnFinish called %d times (%v) when the call returned, want once", len(got), got)
					}
					if status.Code(got[0]) != o.wantCode || errors.Is(got[0], io.EOF) {
						t.Errorf("OnFinish got %v, want code %v (the call returned %v)", got[0], o.wantCode, err)
					}
				})
			}
		}
	})
}

// TestOnFinishStreamOnce checks that reading a finished stream again does
// not call grpc.OnFinish again.
func TestOnFinishStreamOnce(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, echo.Server{})
		n := 0
		s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{Text: "a b"}, grpc.OnFinish(func(error) { n++ }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := echotest.RecvAll(s.Recv); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := s.Recv(); !errors.Is(err, io.EOF) {
				t.Errorf("Recv after the end: %v, want io.EOF", err)
			}
		}
		if n != 1 {
			t.Errorf("OnFinish called %d times, want once", n)
		}
	})
}

// TestIgnoredCallOptions checks that call options with no in-process
// meaning are accepted, for every kind of method.
func TestIgnoredCallOptions(t *testing.T) {
	opts := []grpc.CallOption{
		grpc.WaitForReady(true),
		grpc.CallAuthority("elsewhere.example"),
		grpc.MaxRetryRPCBufferSize(1),
		grpc.StaticMethod(),
		grpc.CallContentSubtype("proto"),
		grpc.UseCompressor("gzip"),
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, echo.Server{})
		for _, kind := range textKinds {
			t.Run(kind.name, func(t *testing.T) {
				got, err := kind.call(timeoutCtx(t), c, "hello", opts...)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, []string{"hello"}) {
					t.Errorf("got %q, want [hello]", got)
				}
			})
		}
	})
}

// TestContentSubtypeAsGRPC: the content-subtype options a call gives
// choose its codec as grpc-go chooses it, side by side with grpc-go over
// bufconn: an empty one means protobuf's, the last one given wins, and
// one no codec is registered for fails with Internal.
func TestContentSubtypeAsGRPC(t *testing.T) {
	cases := [][]grpc.CallOption{
		{grpc.CallContentSubtype("")},
		{grpc.CallContentSubtype("PROTO")},
		{grpc.CallContentSubtype("no-such-codec")},
		{grpc.CallContentSubtype("no-such-codec"), grpc.CallContentSubtype("proto")},
		{grpc.CallContentSubtype("proto"), grpc.CallContentSubtype("no-such-codec")},
		{grpc.CallContentSubtype("no-such-codec"), grpc.CallContentSubtype("")},
	}
	run := func(c echov1.EchoClient) []string {
		var out []string
		for _, opts := range cases {
			resp, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "hi"}, opts...)
			out = append(out, fmt.Sprintf("%v %q", status.Code(err), resp.GetText()))
		}
		return out
	}
	want := run(echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }, nil, nil)))
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, echo.Server{})
		if got := run(c); !slices.Equal(got, want) {
			t.Errorf("inproc  %q\ngrpc-go %q", got, want)
		}
	})
}

// TestCompressorNameAsGRPC: a compressor no compressor is registered for
// fails the call with Internal, as over a socket, side by side with
// grpc-go over bufconn; a registered one and identity pass (in-process
// nothing is compressed).
func TestCompressorNameAsGRPC(t *testing.T) {
	names := []string{"gzip", "identity", "gzp", ""}
	run := func(c echov1.EchoClient) []string {
		var out []string
		for _, name := range names {
			resp, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: "hi"}, grpc.UseCompressor(name))
			out = append(out, fmt.Sprintf("%s: %v %q", name, status.Code(err), resp.GetText()))
		}
		return out
	}
	want := run(echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }, nil, nil)))
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, echo.Server{})
		if got := run(c); !slices.Equal(got, want) {
			t.Errorf("inproc  %q\ngrpc-go %q", got, want)
		}
	})
}

// TestDefaultCallOptionsAsGRPC: a channel's default call options apply to
// every call, before the call's own, which win where both set the same
// limit; side by side with grpc-go's grpc.WithDefaultCallOptions over
// bufconn; and client interceptors see them.
func TestDefaultCallOptionsAsGRPC(t *testing.T) {
	long := strings.Repeat("x", 100)
	run := func(c echov1.EchoClient) []string {
		var out []string
		for _, opts := range [][]grpc.CallOption{nil, {grpc.MaxCallRecvMsgSize(1000)}} {
			_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{Text: long}, opts...)
			out = append(out, status.Code(err).String())
			stream, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{Text: long}, opts...)
			if err == nil {
				_, err = stream.Recv()
			}
			out = append(out, status.Code(err).String())
		}
		return out
	}
	defaults := []grpc.CallOption{grpc.MaxCallRecvMsgSize(50)}
	want := run(echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }, nil,
		[]grpc.DialOption{grpc.WithDefaultCallOptions(defaults...)})))
	if want[0] != codes.ResourceExhausted.String() || want[2] != codes.OK.String() {
		t.Fatalf("grpc-go: %q", want)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		var seen atomic.Int64
		c, _ := newEcho(t, m, echo.Server{}, inproc.WithDefaultCallOptions(defaults...),
			inproc.WithClientUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				if o, ok := opts[0].(grpc.MaxRecvMsgSizeCallOption); ok && o.MaxRecvMsgSize == 50 {
					seen.Add(1) // the default comes first
				}
				return invoker(ctx, method, req, reply, cc, opts...)
			}))
		if got := run(c); !slices.Equal(got, want) {
			t.Errorf("inproc  %q\ngrpc-go %q", got, want)
		}
		if n := seen.Load(); n != 2 {
			t.Errorf("the interceptor saw the default call option first in %d of 2 calls", n)
		}
	})
}
