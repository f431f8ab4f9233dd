package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// detailedStatus is a status with details of two types.
func detailedStatus(t *testing.T) *status.Status {
	t.Helper()
	st, err := status.New(codes.FailedPrecondition, "precondition failed: ü ✓ 100%").WithDetails(
		&errdetails.ErrorInfo{Reason: "STALE", Domain: "example.com", Metadata: map[string]string{"k": "v", "n": "1"}},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "text", Description: "too long"}}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(1500_000_000)},
	)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkStatus fails the test unless got has want's code, message and
// details. The details are compared unpacked: their encoding, of a map
// say, need not be deterministic.
func checkStatus(t *testing.T, got, want *status.Status) {
	t.Helper()
	if got.Code() != want.Code() || got.Message() != want.Message() {
		t.Errorf("client got status %v: %q, want %v: %q", got.Code(), got.Message(), want.Code(), want.Message())
	}
	gd, wd := got.Details(), want.Details()
	if len(gd) != len(wd) {
		t.Fatalf("client got %d details %v, want %d %v", len(gd), gd, len(wd), wd)
	}
	for i := range wd {
		g, ok := gd[i].(proto.Message)
		if !ok {
			t.Errorf("detail %d is %v (%T), not a message", i, gd[i], gd[i])
			continue
		}
		if !proto.Equal(g, wd[i].(proto.Message)) {
			t.Errorf("detail %d is %v, want %v", i, g, wd[i])
		}
	}
}

// TestHandlerStatus checks the status the client gets for each error a
// handler may return, for every kind of method.
func TestHandlerStatus(t *testing.T) {
	cases := []struct {
		name string
		err  func(t *testing.T) error          // what the handler returns
		want func(t *testing.T) *status.Status // what the client gets
	}{
		{"status-with-details",
			func(t *testing.T) error { return detailedStatus(t).Err() },
			detailedStatus},
		{"status",
			func(*testing.T) error { return status.Error(codes.NotFound, "no such thing") },
			func(*testing.T) *status.Status { return status.New(codes.NotFound, "no such thing") }},
		{"wrapped-status",
			func(*testing.T) error {
				return fmt.Errorf("looking: %w", status.Error(codes.NotFound, "no such thing"))
			},
			func(*testing.T) *status.Status {
				return status.New(codes.NotFound, "looking: rpc error: code = NotFound desc = no such thing")
			}},
		{"plain-error",
			func(*testing.T) error { return errors.New("boom") },
			func(*testing.T) *status.Status { return status.New(codes.Unknown, "boom") }},
		{"context.Canceled",
			func(*testing.T) error { return context.Canceled },
			func(*testing.T) *status.Status { return status.New(codes.Canceled, context.Canceled.Error()) }},
		{"context.DeadlineExceeded",
			func(*testing.T) error { return context.DeadlineExceeded },
			func(*testing.T) *status.Status {
				return status.New(codes.DeadlineExceeded, context.DeadlineExceeded.Error())
			}},
		{"wrapped-context.Canceled",
			func(*testing.T) error { return fmt.Errorf("gave up: %w", context.Canceled) },
			func(*testing.T) *status.Status { return status.New(codes.Canceled, "gave up: context canceled") }},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		var handlerErr error
		c, _ := newEcho(t, m, ctxHandlers(func(context.Context) error { return handlerErr }))
		for _, tc := range cases {
			for _, kind := range echoKinds {
				t.Run(tc.name+"/"+kind.name, func(t *testing.T) {
					handlerErr = tc.err(t)
					err := kind.call(timeoutCtx(t), c)
					got, ok := status.FromError(err)
					if !ok {
						t.Fatalf("error %v (%T) is not a status", err, err)
					}
					checkStatus(t, got, tc.want(t))
				})
			}
		}
	})
}

// TestStatusAfterMessages checks that a stream's messages arrive before
// the handler's status, details included.
func TestStatusAfterMessages(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		want := detailedStatus(t)
		c, _ := newEcho(t, m, &funcEcho{
			expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				for _, w := range []string{"a", "b"} {
					if err := s.Send(&echov1.EchoResponse{Text: w}); err != nil {
						return err
					}
				}
				return want.Err()
			},
			update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				r, err := s.Recv()
				if err != nil {
					return err
				}
				if err := s.Send(&echov1.EchoResponse{Text: r.GetText()}); err != nil {
					return err
				}
				return want.Err()
			},
		})
		cases := []struct {
			name      string
			call      func(ctx context.Context) ([]string, error)
			wantTexts []string
		}{
			{"server-stream", func(ctx context.Context) ([]string, error) {
				s, err := c.Expand(ctx, &echov1.EchoRequest{})
				if err != nil {
					return nil, err
				}
				return echotest.RecvAll(s.Recv)
			}, []string{"a", "b"}},
			{"bidi", func(ctx context.Context) ([]string, error) {
				s, err := c.Update(ctx)
				if err != nil {
					return nil, err
				}
				if err := s.Send(&echov1.EchoRequest{Text: "x"}); err != nil {
					return nil, err
				}
				return echotest.RecvAll(s.Recv)
			}, []string{"x"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				texts, err := tc.call(timeoutCtx(t))
				if !slices.Equal(texts, tc.wantTexts) {
					t.Errorf("received %q before the status, want %q", texts, tc.wantTexts)
				}
				checkStatus(t, status.Convert(err), want)
			})
		}
	})
}

// TestUnimplemented checks that calls to a service or method the channel
// does not have fail with Unimplemented, unary and streaming.
func TestUnimplemented(t *testing.T) {
	bidi := &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}
	cases := []struct {
		name string
		call func(ctx context.Context, cc grpc.ClientConnInterface) error
	}{
		{"unary/unknown-service", func(ctx context.Context, cc grpc.ClientConnInterface) error {
			return cc.Invoke(ctx, "/no.such.Service/Get", &echov1.EchoRequest{}, &echov1.EchoResponse{})
		}},
		{"unary/unknown-method", func(ctx context.Context, cc grpc.ClientConnInterface) error {
			return cc.Invoke(ctx, "/echo.v1.Echo/NoSuchMethod", &echov1.EchoRequest{}, &echov1.EchoResponse{})
		}},
		{"stream/unknown-service", func(ctx context.Context, cc grpc.ClientConnInterface) error {
			return rawStream(ctx, cc, bidi, "/no.such.Service/Update")
		}},
		{"stream/unknown-method", func(ctx context.Context, cc grpc.ClientConnInterface) error {
			return rawStream(ctx, cc, bidi, "/echo.v1.Echo/NoSuchStream")
		}},
		{"generated-client/unregistered-service", func(ctx context.Context, cc grpc.ClientConnInterface) error {
			s, err := listv1.NewListStringsClient(cc).List(ctx, &listv1.ListRequest{})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		echov1.RegisterEchoServer(ch, echo.Server{})
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				wantCode(t, "call", tc.call(timeoutCtx(t), ch), codes.Unimplemented)
			})
		}
	})
}

// rawStream opens a stream, sends one message, and returns the error of
// the first RecvMsg (or of NewStream).
func rawStream(ctx context.Context, cc grpc.ClientConnInterface, desc *grpc.StreamDesc, method string) error {
	s, err := cc.NewStream(ctx, desc, method)
	if err != nil {
		return err
	}
	_ = s.SendMsg(&echov1.EchoRequest{Text: "hi"}) // its error is RecvMsg's to tell
	if err := s.CloseSend(); err != nil {
		return err
	}
	return s.RecvMsg(&echov1.EchoResponse{})
}

// TestStoppedChannelUnavailable checks that every kind of call on a
// stopped channel fails with Unavailable.
func TestStoppedChannelUnavailable(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		called := make(chan string, 1)
		c, ch := newEcho(t, m, ctxHandlers(func(context.Context) error {
			called <- "handler"
			return nil
		}))
		ch.Stop()
		for _, kind := range echoKinds {
			t.Run(kind.name, func(t *testing.T) {
				wantCode(t, "call after Stop", kind.call(timeoutCtx(t), c), codes.Unavailable)
				select {
				case <-called:
					t.Error("a handler ran after Stop")
				default:
				}
			})
		}
	})
}

// statusSeen is how a call ended as its client sees it: the code, the
// message (but of Internal, whose message is the library's), the reasons
// of its ErrorInfo details, and the keys of its trailer.
func statusSeen(err error, trailer metadata.MD) string {
	st := status.Convert(err)
	var reasons []string
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reasons = append(reasons, info.Reason)
		} else {
			reasons = append(reasons, fmt.Sprintf("%T", d))
		}
	}
	msg := fmt.Sprintf("%q", st.Message())
	if st.Code() == codes.Internal {
		msg = "-"
	}
	return fmt.Sprintf("%v %s details=%v trailer=%v", st.Code(), msg, reasons, keys(trailer))
}

// statusOracle runs a unary and a server-streaming call whose handlers
// set trailer and end with err (after a response if err is nil), over
// grpc-go and in every mode, and fails where what the client sees
// (statusSeen) differs.
func statusOracle(t *testing.T, trailer metadata.MD, err error) {
	t.Helper()
	srv := &funcEcho{
		get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			if trailer != nil {
				if err := grpc.SetTrailer(ctx, trailer); err != nil {
					return nil, err
				}
			}
			if err != nil {
				return nil, err
			}
			return &echov1.EchoResponse{Text: "ok"}, nil
		},
		expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			s.SetTrailer(trailer)
			if err != nil {
				return err
			}
			return s.Send(&echov1.EchoResponse{Text: "ok"})
		},
	}
	run := func(t *testing.T, c echov1.EchoClient) string {
		var tr metadata.MD
		_, err := c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.Trailer(&tr))
		out := "unary: " + statusSeen(err, tr)
		s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = echotest.RecvAll(s.Recv)
		return out + "; stream: " + statusSeen(err, s.Trailer())
	}
	want := run(t, echoOracle(t, srv, nil))
	t.Logf("grpc-go: %s", want)
	forEachMode(t, func(t *testing.T, m testMode) {
		c, _ := newEcho(t, m, srv)
		if got := run(t, c); got != want {
			t.Errorf("inproc:  %s\ngrpc-go: %s", got, want)
		}
	})
}

// withReason is st with an ErrorInfo detail of reason.
func withReason(t *testing.T, st *status.Status, reason string) *status.Status {
	t.Helper()
	st, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestStatusMessageOnTheWireAsGRPC: a status message crosses HTTP/2
// percent-encoded (http_util.go encodeGrpcMessage), each byte that is not
// UTF-8 as the encoding of U+FFFD, and is decoded back on the client; so
// grpc-go's client sees a message that is not UTF-8 with each bad byte
// replaced. A status with details also crosses encoded in the trailer,
// which protobuf refuses to encode with such a message: grpc-go's server
// then sends no details (http2_server.go writeStatus).
func TestStatusMessageOnTheWireAsGRPC(t *testing.T) {
	for _, c := range []struct {
		name string
		st   func(t *testing.T) *status.Status
	}{
		{"not-utf8", func(*testing.T) *status.Status { return status.New(codes.Aborted, "bad \xff byte") }},
		{"not-utf8-run", func(*testing.T) *status.Status { return status.New(codes.Aborted, "a\xff\xfe\xc3z\xed\xa0\x80.") }},
		{"not-utf8-end", func(*testing.T) *status.Status { return status.New(codes.Aborted, "cut \xe2\x9c") }},
		{"utf8-percent-control", func(*testing.T) *status.Status { return status.New(codes.Aborted, "100% é\n\t✓ %41 \ufffd") }},
		{"not-utf8-with-details", func(t *testing.T) *status.Status {
			return withReason(t, status.New(codes.Aborted, "bad \xff byte"), "why")
		}},
		{"utf8-with-details", func(t *testing.T) *status.Status { return withReason(t, status.New(codes.Aborted, "é 100%"), "why") }},
	} {
		t.Run(c.name, func(t *testing.T) { statusOracle(t, nil, c.st(t).Err()) })
	}
}

// TestStatusDetailsFromTrailerAsGRPC: a handler sets
// grpc-status-details-bin in its trailer itself. grpc-go's server sends
// it as any -bin key, unless the status has details of its own, which
// replace it (http2_server.go writeStatus); its client builds the status
// from it (internal/status NewWithProto): a single value that decodes as
// a google.rpc.Status of the code in grpc-status gives the whole status,
// message and details; one of another code gives Internal; anything else
// is ignored.
func TestStatusDetailsFromTrailerAsGRPC(t *testing.T) {
	bin := func(t *testing.T, st *status.Status) string {
		b, err := proto.Marshal(st.Proto())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const key = "grpc-status-details-bin"
	for _, c := range []struct {
		name    string
		trailer func(t *testing.T) metadata.MD
		err     func(t *testing.T) error
	}{
		{"same-code", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, withReason(t, status.New(codes.NotFound, "from-bin"), "bin")))
		}, func(*testing.T) error { return status.Error(codes.NotFound, "plain") }},
		{"same-code-no-details", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, status.New(codes.NotFound, "from-bin")))
		}, func(*testing.T) error { return status.Error(codes.NotFound, "plain") }},
		{"other-code", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, status.New(codes.NotFound, "from-bin")))
		}, func(*testing.T) error { return status.Error(codes.Aborted, "plain") }},
		{"handler-ok", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, status.New(codes.NotFound, "from-bin")))
		}, func(*testing.T) error { return nil }},
		{"ok-in-bin", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, status.New(codes.OK, "")))
		}, func(*testing.T) error { return nil }},
		{"ok-in-bin-handler-fails", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, status.New(codes.OK, "")))
		}, func(*testing.T) error { return status.Error(codes.NotFound, "plain") }},
		{"not-a-status", func(*testing.T) metadata.MD {
			return metadata.Pairs(key, "\xff\xff\xff")
		}, func(*testing.T) error { return status.Error(codes.NotFound, "plain") }},
		{"two-values", func(t *testing.T) metadata.MD {
			b := bin(t, status.New(codes.NotFound, "from-bin"))
			return metadata.Pairs(key, b, key, b)
		}, func(*testing.T) error { return status.Error(codes.NotFound, "plain") }},
		{"handler-details-win", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, withReason(t, status.New(codes.NotFound, "from-bin"), "bin")))
		}, func(t *testing.T) error { return withReason(t, status.New(codes.NotFound, "plain"), "handler").Err() }},
		{"handler-details-not-utf8", func(t *testing.T) metadata.MD {
			return metadata.Pairs(key, bin(t, withReason(t, status.New(codes.NotFound, "from-bin"), "bin")))
		}, func(t *testing.T) error {
			return withReason(t, status.New(codes.NotFound, "bad \xff"), "handler").Err()
		}},
	} {
		t.Run(c.name, func(t *testing.T) { statusOracle(t, c.trailer(t), c.err(t)) })
	}
}

// TestStatusDetailsUnencodableAsGRPC: a status whose details protobuf
// cannot encode (a detail's type URL that is not UTF-8). grpc-go's server
// then writes the code and the message without
// grpc-status-details-bin, its own or the handler's (http2_server.go
// writeStatus), and its client gets the status without details.
func TestStatusDetailsUnencodableAsGRPC(t *testing.T) {
	bad := func() error {
		return status.ErrorProto(&spb.Status{Code: int32(codes.NotFound), Message: "m",
			Details: []*anypb.Any{{TypeUrl: "\xff", Value: []byte{1}}}})
	}
	t.Run("alone", func(t *testing.T) { statusOracle(t, nil, bad()) })
	t.Run("handler-set-details-bin", func(t *testing.T) {
		b, err := proto.Marshal(withReason(t, status.New(codes.NotFound, "from-bin"), "bin").Proto())
		if err != nil {
			t.Fatal(err)
		}
		statusOracle(t, metadata.Pairs("grpc-status-details-bin", string(b)), bad())
	})
}

// TestStatusCodeAbove31BitsAsGRPC: a handler's status whose code is at
// or above 2^31. grpc-go's server writes the code as it is, and its
// client, which parses grpc-status as a signed 32-bit number
// (http2_client.go operateHeaders), fails the call with Unknown
// ("malformed grpc-status") and takes no trailer: its stats handler sees
// no InTrailer, and grpc.Trailer gets none. The server's side sees the
// status go out. With trailers only, and after a header. grpc-go runs
// again where its client reported the answer before its request (see
// requestFirst).
func TestStatusCodeAbove31BitsAsGRPC(t *testing.T) {
	for _, code := range []codes.Code{1 << 31, math.MaxUint32} {
		t.Run(fmt.Sprint(uint32(code)), func(t *testing.T) {
			statusOracle(t, nil, status.Error(code, "big"))
			for _, header := range []bool{false, true} {
				srv := &funcEcho{
					get: func(ctx context.Context, _ *echov1.EchoRequest) (*echov1.EchoResponse, error) {
						if header {
							if err := grpc.SendHeader(ctx, metadata.Pairs("h", "v")); err != nil {
								return nil, err
							}
						}
						return nil, status.Error(code, "big")
					},
					expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
						if header {
							if err := s.SendHeader(metadata.Pairs("h", "v")); err != nil {
								return err
							}
						}
						return status.Error(code, "big")
					},
				}
				for _, stream := range []bool{false, true} {
					t.Run(fmt.Sprintf("header=%v/stream=%v", header, stream), func(t *testing.T) {
						var want grpcSides
						var seen, wantSeen string
						statsConns(t, statsServer{impl: srv}, newKindsRecorder, requestFirst, func(t *testing.T, cc grpc.ClientConnInterface) {
							c := echov1.NewEchoClient(cc)
							var h, tr metadata.MD
							var err error
							if stream {
								var s grpc.ServerStreamingClient[echov1.EchoResponse]
								if s, err = c.Expand(timeoutCtx(t), &echov1.EchoRequest{}); err != nil {
									t.Fatal(err)
								}
								h, _ = s.Header()
								_, err = echotest.RecvAll(s.Recv)
								tr = s.Trailer()
							} else {
								_, err = c.Get(timeoutCtx(t), &echov1.EchoRequest{}, grpc.Header(&h), grpc.Trailer(&tr))
							}
							seen = fmt.Sprintf("header %v, %s", keys(h), statusSeen(err, tr))
						}, func(t *testing.T, client, server []string, grpcgo bool) {
							if grpcgo {
								want, wantSeen = grpcSides{client, server}, seen
								return
							}
							want.same(t, client, server)
							if seen != wantSeen {
								t.Errorf("the client saw %s; grpc-go's %s", seen, wantSeen)
							}
						})
					})
				}
			}
		})
	}
}

// okStatusError is a handler's error whose GRPCStatus is OK.
type okStatusError struct{ st *status.Status }

func (e okStatusError) Error() string              { return "ok status error" }
func (e okStatusError) GRPCStatus() *status.Status { return e.st }

// endSeen is a stats handler that reports the End of each call it
// hears: its error's code and whether there was one.
type endSeen chan string

func (e endSeen) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (e endSeen) HandleRPC(_ context.Context, s stats.RPCStats) {
	if end, ok := s.(*stats.End); ok {
		e <- fmt.Sprintf("End{%v error=%v}", status.Code(end.Error), end.Error != nil)
	}
}
func (endSeen) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (endSeen) HandleConn(context.Context, stats.ConnStats)                       {}

// TestHandlerOKStatusErrorAsGRPC: a handler returns an error whose
// GRPCStatus is OK, with a message, details, or a response. grpc-go's
// server writes that status with no response (server.go
// processUnaryRPC), and reports the handler's error in its End; its
// unary client, which finds no response before an OK status, fails with
// Internal, and its stream client ends with io.EOF.
func TestHandlerOKStatusErrorAsGRPC(t *testing.T) {
	detailed := func(t *testing.T) *status.Status {
		d, err := anypb.New(&echov1.EchoRequest{Text: "d"})
		if err != nil {
			t.Fatal(err)
		}
		return status.FromProto(&spb.Status{Message: "m", Details: []*anypb.Any{d}})
	}
	for _, c := range []struct {
		name string
		st   func(t *testing.T) *status.Status
		resp bool
	}{
		{"message", func(*testing.T) *status.Status { return status.New(codes.OK, "hmm") }, false},
		{"message-and-response", func(*testing.T) *status.Status { return status.New(codes.OK, "hmm") }, true},
		{"details", detailed, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			herr := okStatusError{c.st(t)}
			srv := &funcEcho{
				get: func(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
					if c.resp {
						return &echov1.EchoResponse{Text: "r"}, herr
					}
					return nil, herr
				},
				expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					if err := s.Send(&echov1.EchoResponse{Text: "x"}); err != nil {
						return err
					}
					return herr
				},
			}
			run := func(t *testing.T, cc grpc.ClientConnInterface, client, server endSeen) string {
				var trailer metadata.MD
				reply := new(echov1.EchoResponse)
				err := cc.Invoke(timeoutCtx(t), echov1.Echo_Get_FullMethodName, &echov1.EchoRequest{}, reply, grpc.Trailer(&trailer))
				st := status.Convert(err)
				out := fmt.Sprintf("unary: code=%v msg=%q reply=%q trailer=%s client=%s server=%s", st.Code(), st.Message(), reply.GetText(), mdText(trailer),
					receive(t, client, "the client's End"), receive(t, server, "the server's End"))
				s, err := echov1.NewEchoClient(cc).Expand(timeoutCtx(t), &echov1.EchoRequest{})
				if err != nil {
					t.Fatal(err)
				}
				got, err := echotest.RecvAll(s.Recv)
				return out + fmt.Sprintf("\nstream: got=%d err=%v trailer=%s client=%s server=%s", len(got), err, mdText(s.Trailer()),
					receive(t, client, "the client's End"), receive(t, server, "the server's End"))
			}
			client, server := make(endSeen, 1), make(endSeen, 1)
			want := run(t, realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) },
				[]grpc.ServerOption{grpc.StatsHandler(server)}, []grpc.DialOption{grpc.WithStatsHandler(client)}), client, server)
			t.Logf("grpc-go:\n%s", want)
			forEachMode(t, func(t *testing.T, m testMode) {
				client, server := make(endSeen, 1), make(endSeen, 1)
				_, ch := newEcho(t, m, srv, inproc.WithClientStatsHandler(client), inproc.WithServerStatsHandler(server))
				if got := run(t, ch, client, server); got != want {
					t.Errorf("inproc:\n%s\ngrpc-go:\n%s", got, want)
				}
			})
		})
	}
}
