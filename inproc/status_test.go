package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/internal/echotest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
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
