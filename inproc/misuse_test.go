package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// misuseSends is how many messages each of two goroutines sends on one
// stream: many windows, so that one of them waits inside SendMsg while the
// other calls it.
const misuseSends = 2000

// TestConcurrentSendFailsStream sends on one stream from two goroutines at
// once, which gRPC forbids, from the client and from the handler, and
// receives from two goroutines at once. Over grpc-go the mistake stalls the
// stream until it is cancelled; here it must fail the stream with Internal
// (a Send or Recv says so), never corrupt what is delivered, never spin,
// and end when the client cancels, leaving no goroutine behind.
func TestConcurrentSendFailsStream(t *testing.T) {
	forEachMode(t, func(t *testing.T, m testMode) {
		t.Run("side=client/op=send", func(t *testing.T) {
			handlerErr := make(chan error, 1)
			c, ch := newEcho(t, m, &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				err := drainInOrder(s)
				handlerErr <- err
				return err
			}}, inproc.WithWindow(4))
			ctx, cancel := context.WithCancel(timeoutCtx(t))
			s, err := c.Update(ctx)
			if err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 2)
			var wg sync.WaitGroup
			for g := range 2 {
				wg.Go(func() {
					for i := range misuseSends {
						if err := s.Send(&echov1.EchoRequest{Text: strconv.Itoa(g) + ":" + strconv.Itoa(i)}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			sawInternal := false
			for err := range errs {
				if status.Code(err) == codes.Internal {
					sawInternal = true
				} else if !errors.Is(err, io.EOF) {
					t.Errorf("a concurrent Send: %v, want Internal or io.EOF", err)
				}
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			_, recvErr := s.Recv()
			if !sawInternal {
				// The two goroutines never overlapped: the stream must be
				// healthy then.
				t.Logf("the two senders did not overlap")
				if !errors.Is(recvErr, io.EOF) {
					t.Errorf("Recv after two Send loops that did not overlap: %v, want io.EOF", recvErr)
				}
			} else {
				wantCode(t, "Recv after concurrent Sends", recvErr, codes.Internal)
			}
			cancel()
			// The call ends, and its handler with it (an Inline handler
			// may not have run at all).
			receive(t, async(func() error { ch.GracefulStop(); return nil }), "every call to end")
			select {
			case err := <-handlerErr:
				if err != nil && !isCode(err, codes.Canceled, codes.Internal) {
					t.Errorf("the handler saw %v", err)
				}
			default:
			}
		})
		t.Run("side=server/op=send", func(t *testing.T) {
			if !isIsolated(t, m) {
				t.Skip("an Inline handler is a coroutine of its client: its other goroutines cannot use the stream")
			}
			handlerErrs := make(chan error, 2)
			c, _ := newEcho(t, m, &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				var wg sync.WaitGroup
				for g := range 2 {
					wg.Go(func() {
						for i := range misuseSends {
							if err := s.Send(&echov1.EchoResponse{Text: strconv.Itoa(g) + ":" + strconv.Itoa(i)}); err != nil {
								handlerErrs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				return nil
			}}, inproc.WithWindow(4))
			ctx, cancel := context.WithCancel(timeoutCtx(t))
			s, err := c.Expand(ctx, &echov1.EchoRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var recvErr error
			last := map[string]int{"0": -1, "1": -1}
			for {
				r, err := s.Recv()
				if err != nil {
					recvErr = err
					break
				}
				g, i, ok := cutNumber(r.GetText())
				if !ok || i <= last[g] {
					t.Fatalf("received %q after %d from sender %s: a corrupted queue", r.GetText(), last[g], g)
				}
				last[g] = i
			}
			cancel()
			if errors.Is(recvErr, io.EOF) {
				t.Logf("the two senders did not overlap")
				return
			}
			wantCode(t, "Recv after the handler's concurrent Sends", recvErr, codes.Internal)
			if err := receive(t, handlerErrs, "a Send to fail"); !isCode(err, codes.Internal, codes.Canceled) {
				t.Errorf("a concurrent Send of the handler: %v, want Internal or Canceled", err)
			}
		})
		t.Run("side=client/op=recv", func(t *testing.T) {
			c, _ := newEcho(t, m, &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				for i := range misuseSends {
					if err := s.Send(&echov1.EchoResponse{Text: "0:" + strconv.Itoa(i)}); err != nil {
						return err
					}
				}
				return nil
			}}, inproc.WithWindow(4))
			ctx, cancel := context.WithCancel(timeoutCtx(t))
			defer cancel()
			s, err := c.Expand(ctx, &echov1.EchoRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			seen := map[int]bool{}
			errs := make(chan error, 2)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					for {
						r, err := s.Recv()
						if err != nil {
							errs <- err
							return
						}
						_, i, ok := cutNumber(r.GetText())
						mu.Lock()
						dup := seen[i]
						seen[i] = true
						mu.Unlock()
						if !ok || dup {
							errs <- errors.New("received " + r.GetText() + " twice: a corrupted queue")
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if !errors.Is(err, io.EOF) && status.Code(err) != codes.Internal {
					t.Errorf("a concurrent Recv: %v, want io.EOF or Internal", err)
				}
			}
		})
	})
}

// drainInOrder receives until the end, checking that each sender's
// messages ("G:I") come in order.
func drainInOrder(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
	last := map[string]int{}
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		g, i, ok := cutNumber(r.GetText())
		if prev, seen := last[g]; !ok || seen && i <= prev {
			return status.Errorf(codes.DataLoss, "received %q after %d: a corrupted queue", r.GetText(), prev)
		}
		last[g] = i
	}
}

// cutNumber splits "G:I" into G and the number I.
func cutNumber(text string) (string, int, bool) {
	for j := range len(text) {
		if text[j] == ':' {
			i, err := strconv.Atoi(text[j+1:])
			return text[:j], i, err == nil
		}
	}
	return "", 0, false
}

// isCode reports whether err has one of the codes.
func isCode(err error, want ...codes.Code) bool {
	got := status.Code(err)
	for _, w := range want {
		if got == w {
			return true
		}
	}
	return false
}

// outcome is an error as the tests compare it: io.EOF or a code.
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

// TestMisuseOutcomes runs misuses and edge cases through grpc-go and
// inproc and compares what each call returns.
func TestMisuseOutcomes(t *testing.T) {
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
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			for {
				if _, err := s.Recv(); err != nil {
					return nil
				}
			}
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
		{"stream/send-after-closesend-and-end", func(ctx context.Context, cc grpc.ClientConnInterface) []string {
			s, err := echov1.NewEchoClient(cc).Update(ctx)
			if err != nil {
				return []string{"NewStream " + outcome(err)}
			}
			s.CloseSend()
			_, err1 := s.Recv()
			err2 := s.Send(&echov1.EchoRequest{})
			return []string{outcome(err1), outcome(err2), outcome(s.CloseSend())}
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

// TestUnaryDecodeTwice pins what the docs say of a unary handler that
// calls its decode function twice: grpc-go's second call fails, so
// nothing can depend on it, and inproc's gives the request again, in
// every mode.
func TestUnaryDecodeTwice(t *testing.T) {
	desc := &grpc.ServiceDesc{
		ServiceName: "attack.Twice",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Get", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var first, second echov1.EchoRequest
			if err := dec(&first); err != nil {
				return nil, err
			}
			if err := dec(&second); err != nil {
				return &echov1.EchoResponse{Text: "second decode failed"}, nil
			}
			return &echov1.EchoResponse{Text: "second decode gave " + second.GetText()}, nil
		}}},
	}
	call := func(t *testing.T, cc grpc.ClientConnInterface) string {
		var resp echov1.EchoResponse
		if err := cc.Invoke(context.Background(), "/attack.Twice/Get", &echov1.EchoRequest{Text: "hi"}, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.GetText()
	}
	if got := call(t, realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(desc, struct{}{}) }, nil, nil)); got != "second decode failed" {
		t.Errorf("grpc-go: %s, want the second decode to fail", got)
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(desc, struct{}{})
		if got := call(t, ch); got != "second decode gave hi" {
			t.Errorf("%s, want the request again", got)
		}
	})
}
