package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// outcome is an error as the attacks compare it: io.EOF or a code.
func outcome(err error) string {
	if errors.Is(err, io.EOF) {
		return "EOF"
	}
	if err != nil && status.Code(err) == codes.Unknown && !isStatus(err) {
		return "non-status " + err.Error()
	}
	return status.Code(err).String()
}

func isStatus(err error) bool { _, ok := status.FromError(err); return ok }

// TestAttackMisuseOutcomes runs misuses and edge cases through grpc-go and
// inproc and compares what each call returns.
func TestAttackMisuseOutcomes(t *testing.T) {
	srv := &funcEcho{
		get: func(_ context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			if r.GetText() == "nil" {
				return nil, nil
			}
			return &echov1.EchoResponse{Text: r.GetText()}, nil
		},
		expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			switch r.GetText() {
			case "typed-nil":
				return s.Send(nil)
			case "untyped-nil":
				return s.SendMsg(nil)
			}
			return s.Send(&echov1.EchoResponse{Text: "one"})
		},
	}
	cases := []struct {
		name string
		run  func(ctx context.Context, cc grpc.ClientConnInterface) []string
	}{
		{"unary/handler-returns-typed-nil", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			_, err := echov1.NewEchoClient(cc).Get(ctx, &echov1.EchoRequest{Text: "nil"})
			return []string{outcome(err)}
		}},
		{"unary/typed-nil-request", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			_, err := echov1.NewEchoClient(cc).Get(ctx, nil)
			return []string{outcome(err)}
		}},
		{"unary/untyped-nil-request", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			err := cc.Invoke(ctx, echov1.Echo_Get_FullMethodName, nil, &echov1.EchoResponse{})
			return []string{outcome(err)}
		}},
		{"unary/untyped-nil-reply", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			err := catch(func() error { return cc.Invoke(ctx, echov1.Echo_Get_FullMethodName, &echov1.EchoRequest{}, nil) })
			return []string{outcome(err)}
		}},
		{"unary/non-proto-request", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			err := cc.Invoke(ctx, echov1.Echo_Get_FullMethodName, struct{ A int }{1}, &echov1.EchoResponse{})
			return []string{outcome(err)}
		}},
		{"unary/unknown-method-unencodable-request", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			err := cc.Invoke(ctx, "/echo.v1.Echo/NoSuchMethod", struct{ A int }{1}, &echov1.EchoResponse{})
			return []string{outcome(err)}
		}},
		{"unary/reply-other-type", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			var reply echov1.EchoRequest // same wire shape as EchoResponse
			err := cc.Invoke(ctx, echov1.Echo_Get_FullMethodName, &echov1.EchoRequest{Text: "x"}, &reply)
			return []string{outcome(err), reply.GetText()}
		}},
		{"stream/handler-sends-typed-nil", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			s, err := echov1.NewEchoClient(cc).Expand(ctx, &echov1.EchoRequest{Text: "typed-nil"})
			if err != nil {
				return []string{"NewStream " + outcome(err)}
			}
			var out []string
			for range 3 {
				_, err := s.Recv()
				out = append(out, outcome(err))
			}
			return out
		}},
		{"stream/handler-sends-untyped-nil", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			s, err := echov1.NewEchoClient(cc).Expand(ctx, &echov1.EchoRequest{Text: "untyped-nil"})
			if err != nil {
				return []string{"NewStream " + outcome(err)}
			}
			var out []string
			for range 3 {
				_, err := s.Recv()
				out = append(out, outcome(err))
			}
			return out
		}},
		{"stream/recv-after-end", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			s, err := echov1.NewEchoClient(cc).Expand(ctx, &echov1.EchoRequest{})
			if err != nil {
				return []string{"NewStream " + outcome(err)}
			}
			var out []string
			for range 4 {
				_, err := s.Recv()
				out = append(out, outcome(err))
			}
			return out
		}},
		{"stream/send-after-closesend", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			s, err := echov1.NewEchoClient(cc).Update(ctx)
			if err != nil {
				return []string{"NewStream " + outcome(err)}
			}
			s.CloseSend()
			err1 := s.Send(&echov1.EchoRequest{})
			_, err2 := s.Recv()
			return []string{outcome(err1), outcome(err2)}
		}},
		{"stream/send-after-recv-error", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			s, err := echov1.NewEchoClient(cc).Update(ctx)
			if err != nil {
				return []string{"NewStream " + outcome(err)}
			}
			cancel()
			_, err1 := s.Recv()
			err2 := s.Send(&echov1.EchoRequest{})
			_, err3 := s.Recv()
			return []string{outcome(err1), outcome(err2), outcome(err3)}
		}},
		{"stream/unary-method-via-newstream-two-requests", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			s, err := cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, echov1.Echo_Get_FullMethodName)
			if err != nil {
				return []string{"NewStream " + outcome(err)}
			}
			e1 := s.SendMsg(&echov1.EchoRequest{Text: "a"})
			e2 := s.SendMsg(&echov1.EchoRequest{Text: "b"})
			s.CloseSend()
			var r echov1.EchoResponse
			e3 := s.RecvMsg(&r)
			return []string{outcome(e1), outcome(e2), outcome(e3)}
		}},
		{"codec/forced-failing-codec", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			err := cc.Invoke(ctx, echov1.Echo_Get_FullMethodName, &echov1.EchoRequest{}, &echov1.EchoResponse{}, grpc.ForceCodecV2(failingCodec{}))
			return []string{outcome(err)}
		}},
	}
	ref := realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, nil, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := fmt.Sprint(tc.run(timeoutCtx(t), ref))
			forEachMode(t, func(t *testing.T, m testMode) {
				_, ch := newEcho(t, m, srv)
				if got := fmt.Sprint(tc.run(timeoutCtx(t), ch)); got != want {
					t.Errorf("inproc: %s; grpc-go: %s", got, want)
				}
			})
		})
	}
}

// failingCodec marshals but cannot unmarshal.
type failingCodec struct{}

func (failingCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}
func (failingCodec) Unmarshal(mem.BufferSlice, any) error { return errors.New("cannot unmarshal") }
func (failingCodec) Name() string                         { return "failing" }
