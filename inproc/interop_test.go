package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The interop cases report failure through grpclog.Fatal, which exits the
// process. failLogger turns that into a panic the test recovers from.
type failLogger struct{ grpclog.LoggerV2 }

type interopFailure string

func (failLogger) Fatal(args ...any)   { panic(interopFailure(fmt.Sprint(args...))) }
func (failLogger) Fatalln(args ...any) { panic(interopFailure(fmt.Sprint(args...))) }
func (failLogger) Fatalf(format string, args ...any) {
	panic(interopFailure(fmt.Sprintf(format, args...)))
}
func (failLogger) FatalDepth(_ int, args ...any) { panic(interopFailure(fmt.Sprint(args...))) }
func (l failLogger) InfoDepth(int, ...any)       {}
func (l failLogger) WarningDepth(int, ...any)    {}
func (l failLogger) ErrorDepth(int, ...any)      {}

var interopCases = []struct {
	name string
	run  func(context.Context, testgrpc.TestServiceClient)
}{
	{"empty_unary", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoEmptyUnaryCall(ctx, c) }},
	{"large_unary", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoLargeUnaryCall(ctx, c) }},
	{"client_streaming", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoClientStreaming(ctx, c) }},
	{"server_streaming", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoServerStreaming(ctx, c) }},
	{"ping_pong", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoPingPong(ctx, c) }},
	{"empty_stream", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoEmptyStream(ctx, c) }},
	{"custom_metadata", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoCustomMetadata(ctx, c) }},
	{"status_code_and_message", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoStatusCodeAndMessage(ctx, c) }},
	{"special_status_message", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoSpecialStatusMessage(ctx, c) }},
	{"cancel_after_begin", func(ctx context.Context, c testgrpc.TestServiceClient) { interop.DoCancelAfterBegin(ctx, c) }},
	{"cancel_after_first_response", func(ctx context.Context, c testgrpc.TestServiceClient) {
		interop.DoCancelAfterFirstResponse(ctx, c)
	}},
	{"timeout_on_sleeping_server", func(ctx context.Context, c testgrpc.TestServiceClient) {
		interop.DoTimeoutOnSleepingServer(ctx, c)
	}},
}

// TestInterop runs grpc-go's interop test cases through a Channel in every
// combination of copy mode and execution.
func TestInterop(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ch := inproc.New(mode.opts...)
			t.Cleanup(ch.Stop)
			testgrpc.RegisterTestServiceServer(ch, interop.NewTestServer())
			client := testgrpc.NewTestServiceClient(ch)
			for _, tc := range interopCases {
				t.Run(tc.name, func(t *testing.T) {
					defer func() {
						if r := recover(); r != nil {
							if msg, ok := r.(interopFailure); ok {
								t.Fatal(string(msg))
							}
							panic(r)
						}
					}()
					tc.run(t.Context(), client)
				})
			}
		})
	}
}

// recorder is a log of what interceptors and handlers did, in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// take returns the log and empties it.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

func errName(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, io.EOF):
		return "EOF"
	}
	return status.Code(err).String()
}

func text(m any) string {
	switch m := m.(type) {
	case *echov1.EchoRequest:
		return m.GetText()
	case *echov1.EchoResponse:
		return m.GetText()
	}
	return fmt.Sprintf("%T", m)
}

// chainKey is the context key under which server interceptors list
// themselves, so the handler shows which context it got.
type chainKey struct{}

func withChain(ctx context.Context, name string) context.Context {
	prev, _ := ctx.Value(chainKey{}).([]string)
	return context.WithValue(ctx, chainKey{}, append(slices.Clip(prev), name))
}

// The interceptors below log what they see, change the context, and change
// the messages going through them (requests get "+name", responses
// "<name"), so the log and the results show the order they ran in.

func serverUnary(r *recorder, name string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		r.add("%s> %s req=%s", name, info.FullMethod, text(req))
		req.(*echov1.EchoRequest).Text += "+" + name
		resp, err := handler(withChain(ctx, name), req)
		if err == nil {
			resp.(*echov1.EchoResponse).Text += "<" + name
		}
		r.add("%s< %s", name, errName(err))
		return resp, err
	}
}

func serverStream(r *recorder, name string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		r.add("%s> %s client-stream=%v server-stream=%v", name, info.FullMethod, info.IsClientStream, info.IsServerStream)
		err := handler(srv, &loggedServerStream{ServerStream: ss, r: r, name: name, ctx: withChain(ss.Context(), name)})
		r.add("%s< %s", name, errName(err))
		return err
	}
}

type loggedServerStream struct {
	grpc.ServerStream
	r    *recorder
	name string
	ctx  context.Context
}

func (s *loggedServerStream) Context() context.Context { return s.ctx }

func (s *loggedServerStream) SendMsg(m any) error {
	m.(*echov1.EchoResponse).Text += "<" + s.name
	err := s.ServerStream.SendMsg(m)
	s.r.add("%s.Send %s %s", s.name, text(m), errName(err))
	return err
}

func (s *loggedServerStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		m.(*echov1.EchoRequest).Text += "+" + s.name
	}
	s.r.add("%s.Recv %s %s", s.name, text(m), errName(err))
	return err
}

func clientUnary(r *recorder, name string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		r.add("%s> %s req=%s", name, method, text(req))
		ctx = metadata.AppendToOutgoingContext(ctx, "chain", name)
		err := invoker(ctx, method, &echov1.EchoRequest{Text: text(req) + "+" + name}, reply, cc, opts...)
		if err == nil {
			reply.(*echov1.EchoResponse).Text += "<" + name
		}
		r.add("%s< %s", name, errName(err))
		return err
	}
}

func clientStream(r *recorder, name string) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		r.add("%s> %s client-stream=%v server-stream=%v", name, method, desc.ClientStreams, desc.ServerStreams)
		ctx = metadata.AppendToOutgoingContext(ctx, "chain", name)
		cs, err := streamer(ctx, desc, cc, method, opts...)
		r.add("%s< %s", name, errName(err))
		if err != nil {
			return nil, err
		}
		return &loggedClientStream{ClientStream: cs, r: r, name: name}, nil
	}
}

type loggedClientStream struct {
	grpc.ClientStream
	r    *recorder
	name string
}

func (s *loggedClientStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(&echov1.EchoRequest{Text: text(m) + "+" + s.name})
	s.r.add("%s.Send %s %s", s.name, text(m), errName(err))
	return err
}

func (s *loggedClientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil {
		m.(*echov1.EchoResponse).Text += "<" + s.name
	}
	s.r.add("%s.Recv %s %s", s.name, text(m), errName(err))
	return err
}

func (s *loggedClientStream) CloseSend() error {
	err := s.ClientStream.CloseSend()
	s.r.add("%s.CloseSend %s", s.name, errName(err))
	return err
}

// loggingEcho is an Echo server that logs what its handlers get.
func loggingEcho(r *recorder) *funcEcho {
	start := func(ctx context.Context, method string) {
		md, _ := metadata.FromIncomingContext(ctx)
		chain, _ := ctx.Value(chainKey{}).([]string)
		r.add("handler %s chain=%v md=%v", method, chain, md.Get("chain"))
	}
	return &funcEcho{
		get: func(ctx context.Context, req *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			start(ctx, "Get")
			r.add("handler req=%s", req.GetText())
			return &echov1.EchoResponse{Text: req.GetText()}, nil
		},
		expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			start(s.Context(), "Expand")
			r.add("handler req=%s", req.GetText())
			for _, w := range []string{"one", "two"} {
				if err := s.Send(&echov1.EchoResponse{Text: w}); err != nil {
					return err
				}
			}
			return nil
		},
		collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			start(s.Context(), "Collect")
			var texts []string
			for {
				req, err := s.Recv()
				if errors.Is(err, io.EOF) {
					return s.SendAndClose(&echov1.EchoResponse{Text: strings.Join(texts, " ")})
				}
				if err != nil {
					return err
				}
				texts = append(texts, req.GetText())
			}
		},
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			start(s.Context(), "Update")
			for {
				req, err := s.Recv()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := s.Send(&echov1.EchoResponse{Text: req.GetText()}); err != nil {
					return err
				}
			}
		},
	}
}

// TestClientInterceptorAllocatesNothing checks that a client unary
// interceptor that only passes the call on costs it no allocation.
func TestClientInterceptorAllocatesNothing(t *testing.T) {
	pass := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	allocs := func(opts ...inproc.Option) float64 {
		c, _ := newEcho(t, modes[0], echo.Server{}, opts...)
		req := &echov1.EchoRequest{Text: "x"}
		return testing.AllocsPerRun(100, func() {
			if _, err := c.Get(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		})
	}
	plain, intercepted := allocs(), allocs(inproc.WithClientUnaryInterceptor(pass))
	if intercepted > plain {
		t.Errorf("an intercepted call allocates %v times, a plain one %v", intercepted, plain)
	}
}

// TestInterceptorOrder runs the same logging interceptors, server and
// client, unary and stream, on a Channel and on grpc-go over bufconn, and
// compares what they log, what the handlers see and what the client gets.
func TestInterceptorOrder(t *testing.T) {
	calls := []struct {
		name string
		call func(ctx context.Context, c echov1.EchoClient) ([]string, error)
	}{
		{"unary", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
			r, err := c.Get(ctx, &echov1.EchoRequest{Text: "hi"})
			return []string{r.GetText()}, err
		}},
		{"server-stream", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
			s, err := c.Expand(ctx, &echov1.EchoRequest{Text: "hi"})
			if err != nil {
				return nil, err
			}
			return echotest.RecvAll(s.Recv)
		}},
		{"client-stream", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
			s, err := c.Collect(ctx)
			if err != nil {
				return nil, err
			}
			for _, w := range []string{"a", "b"} {
				if err := s.Send(&echov1.EchoRequest{Text: w}); err != nil {
					return nil, err
				}
			}
			r, err := s.CloseAndRecv()
			return []string{r.GetText()}, err
		}},
		{"bidi", func(ctx context.Context, c echov1.EchoClient) ([]string, error) {
			s, err := c.Update(ctx)
			if err != nil {
				return nil, err
			}
			var texts []string
			for _, w := range []string{"a", "b"} {
				if err := s.Send(&echov1.EchoRequest{Text: w}); err != nil {
					return texts, err
				}
				r, err := s.Recv()
				if err != nil {
					return texts, err
				}
				texts = append(texts, r.GetText())
			}
			if err := s.CloseSend(); err != nil {
				return texts, err
			}
			rest, err := echotest.RecvAll(s.Recv)
			return append(texts, rest...), err
		}},
	}

	type logs struct {
		client, server, results []string
	}
	run := func(t *testing.T, c echov1.EchoClient, cr, sr *recorder) map[string]logs {
		out := map[string]logs{}
		for _, call := range calls {
			texts, err := call.call(timeoutCtx(t), c)
			if err != nil {
				t.Fatalf("%s: %v", call.name, err)
			}
			out[call.name] = logs{cr.take(), sr.take(), texts}
		}
		return out
	}

	// The reference: grpc-go.
	var cr, sr recorder
	cc := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, loggingEcho(&sr)) },
		[]grpc.ServerOption{
			grpc.ChainUnaryInterceptor(serverUnary(&sr, "s1")),
			grpc.ChainUnaryInterceptor(serverUnary(&sr, "s2"), serverUnary(&sr, "s3")),
			grpc.ChainStreamInterceptor(serverStream(&sr, "s1")),
			grpc.ChainStreamInterceptor(serverStream(&sr, "s2"), serverStream(&sr, "s3")),
		},
		[]grpc.DialOption{
			grpc.WithChainUnaryInterceptor(clientUnary(&cr, "c1")),
			grpc.WithChainUnaryInterceptor(clientUnary(&cr, "c2"), clientUnary(&cr, "c3")),
			grpc.WithChainStreamInterceptor(clientStream(&cr, "c1")),
			grpc.WithChainStreamInterceptor(clientStream(&cr, "c2"), clientStream(&cr, "c3")),
		})
	want := run(t, echov1.NewEchoClient(cc), &cr, &sr)
	if got := want["unary"].results; !slices.Equal(got, []string{"hi+c1+c2+c3+s1+s2+s3<s3<s2<s1<c3<c2<c1"}) {
		t.Fatalf("grpc-go's reference run gave %q: the test's interceptors are wrong", got)
	}

	forEachMode(t, func(t *testing.T, m testMode) {
		var cr, sr recorder
		ch := newChannel(t, m,
			inproc.WithServerUnaryInterceptor(serverUnary(&sr, "s1")),
			inproc.WithServerUnaryInterceptor(serverUnary(&sr, "s2"), serverUnary(&sr, "s3")),
			inproc.WithServerStreamInterceptor(serverStream(&sr, "s1")),
			inproc.WithServerStreamInterceptor(serverStream(&sr, "s2"), serverStream(&sr, "s3")),
			inproc.WithClientUnaryInterceptor(clientUnary(&cr, "c1")),
			inproc.WithClientUnaryInterceptor(clientUnary(&cr, "c2"), clientUnary(&cr, "c3")),
			inproc.WithClientStreamInterceptor(clientStream(&cr, "c1")),
			inproc.WithClientStreamInterceptor(clientStream(&cr, "c2"), clientStream(&cr, "c3")),
		)
		echov1.RegisterEchoServer(ch, loggingEcho(&sr))
		got := run(t, echov1.NewEchoClient(ch), &cr, &sr)
		for _, call := range calls {
			g, w := got[call.name], want[call.name]
			compareLogs(t, call.name+" client log", g.client, w.client)
			compareLogs(t, call.name+" server log", g.server, w.server)
			compareLogs(t, call.name+" results", g.results, w.results)
		}
	})
}

func compareLogs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s differs from grpc-go's:\ngot:\n\t%s\nwant (grpc-go):\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// infoCreds sends, as "ri-method", the method its context's
// credentials.RequestInfo names.
type infoCreds struct{}

func (infoCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	ri, ok := credentials.RequestInfoFromContext(ctx)
	if !ok {
		return map[string]string{"ri-method": "none"}, nil
	}
	return map[string]string{"ri-method": ri.Method}, nil
}
func (infoCreds) RequireTransportSecurity() bool { return false }

// TestPerRPCCredsRequestInfoAsGRPC: grpc-go's transport calls
// GetRequestMetadata with a context carrying credentials.RequestInfo (the
// method, the connection's AuthInfo); credentials such as oauth's read it.
func TestPerRPCCredsRequestInfoAsGRPC(t *testing.T) {
	seen := make(chan []string, 1)
	srv := &funcEcho{get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		seen <- md.Get("ri-method")
		return &echov1.EchoResponse{}, nil
	}}
	run := func(t *testing.T, c echov1.EchoClient) []string {
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.PerRPCCredentials(infoCreds{})); err != nil {
			t.Fatal(err)
		}
		return receive(t, seen, "the handler")
	}
	want := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: %q", want)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		if got := run(t, c); !slices.Equal(got, want) {
			t.Errorf("the credentials saw RequestInfo.Method %q; grpc-go %q", got, want)
		}
	})
}

// privateCreds are per-RPC credentials that, as oauth's do, refuse to send
// a token over a connection less secure than TLS.
type privateCreds struct{}

func (privateCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	ri, _ := credentials.RequestInfoFromContext(ctx)
	if err := credentials.CheckSecurityLevel(ri.AuthInfo, credentials.PrivacyAndIntegrity); err != nil {
		return nil, err
	}
	return map[string]string{"token": "t"}, nil
}
func (privateCreds) RequireTransportSecurity() bool { return true }

// TestPerRPCCredsSeePrivateConnection checks that credentials that check
// the connection's security level, as oauth's do, find an in-process call
// private: it never leaves the process (see the package doc).
func TestPerRPCCredsSeePrivateConnection(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		var got []string
		c, _ := newEcho(t, m, &funcEcho{get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			got = md.Get("token")
			return &echov1.EchoResponse{}, nil
		}})
		if _, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.PerRPCCredentials(privateCreds{})); err != nil {
			t.Fatalf("Get with credentials that require a private connection: %v", err)
		}
		if len(got) != 1 || got[0] != "t" {
			t.Errorf("the handler got token %q, want the credentials' one", got)
		}
	})
}
