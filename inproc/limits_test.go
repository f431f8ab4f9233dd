package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// shapeEcho is an Echo server whose responses are what answer makes of
// each request's text: Get and Collect answer the first request, Expand
// and Update every one.
func shapeEcho(answer func(string) string) *funcEcho {
	return &funcEcho{
		get: func(_ context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			return &echov1.EchoResponse{Text: answer(r.GetText())}, nil
		},
		expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			return s.Send(&echov1.EchoResponse{Text: answer(r.GetText())})
		},
		collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			var first *echov1.EchoRequest
			for {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				if first == nil {
					first = r
				}
			}
			return s.SendAndClose(&echov1.EchoResponse{Text: answer(first.GetText())})
		},
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			for {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := s.Send(&echov1.EchoResponse{Text: answer(r.GetText())}); err != nil {
					return err
				}
			}
		},
	}
}

// answerAs answers "size=N" with N bytes and "utf8=bad" with invalid UTF-8;
// anything else with itself.
func answerAs(text string) string {
	if n, ok := strings.CutPrefix(text, "size="); ok {
		size, _ := strconv.Atoi(n)
		return strings.Repeat("x", size)
	}
	if text == "utf8=bad" {
		return "\xff"
	}
	return "ok"
}

// TestLimitsAsOverSocket sends what a socket refuses (messages over
// grpc-go's default 4 MiB receive limit, over the server's configured
// limits, strings that are not UTF-8) in each direction and each kind of
// method, and checks that every mode refuses it with the code grpc-go over
// a socket gives, which the test asks grpc-go for first, and that what a
// socket accepts is accepted.
func TestLimitsAsOverSocket(t *testing.T) {
	const (
		defaultLimit = 4 << 20
		setLimit     = 1000
	)
	big := func(n int) string { return strings.Repeat("y", n) }
	cases := []struct {
		name    string
		request string
		server  []grpc.ServerOption
		inproc  []inproc.Option
		want    codes.Code
	}{
		{"request=default-limit", big(defaultLimit - 8), nil, nil, codes.OK},
		{"request=over-default-limit", big(defaultLimit + 1), nil, nil, codes.ResourceExhausted},
		{"response=default-limit", "size=" + strconv.Itoa(defaultLimit-8), nil, nil, codes.OK},
		{"response=over-default-limit", "size=" + strconv.Itoa(defaultLimit+1), nil, nil, codes.ResourceExhausted},
		{"request=at-server-limit", big(setLimit - 3), []grpc.ServerOption{grpc.MaxRecvMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxRecvMsgSize(setLimit)}, codes.OK},
		{"request=over-server-limit", big(setLimit - 2), []grpc.ServerOption{grpc.MaxRecvMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxRecvMsgSize(setLimit)}, codes.ResourceExhausted},
		{"response=at-server-limit", "size=" + strconv.Itoa(setLimit-3), []grpc.ServerOption{grpc.MaxSendMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxSendMsgSize(setLimit)}, codes.OK},
		{"response=over-server-limit", "size=" + strconv.Itoa(setLimit-2), []grpc.ServerOption{grpc.MaxSendMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxSendMsgSize(setLimit)}, codes.ResourceExhausted},
		{"request=invalid-utf8", "\xffbad", nil, nil, codes.Internal},
		{"response=invalid-utf8", "utf8=bad", nil, nil, codes.Internal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := shapeEcho(answerAs)
			ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, tc.server, nil))
			for _, kind := range textKinds {
				_, err := kind.call(timeoutCtx(t), ref, tc.request)
				if got := status.Code(err); got != tc.want {
					t.Fatalf("reference: grpc-go gives %v for %s, the test expects %v", err, kind.name, tc.want)
				}
			}
			forEachMode(t, func(t *testing.T, m testMode) {
				c, _ := newEcho(t, m, srv, tc.inproc...)
				for _, kind := range textKinds {
					_, err := kind.call(timeoutCtx(t), c, tc.request)
					if got := status.Code(err); got != tc.want {
						t.Errorf("%s: %v, want code %v as grpc-go gives", kind.name, err, tc.want)
					}
				}
			})
		})
	}
}

// TestClientSendOverLimitEndsCallAsGRPC: a client's Send over its own
// limit (grpc.MaxCallSendMsgSize), then CloseSend and Recv. grpc-go's
// failed Send ends the call (stream.go clientStream.SendMsg finishes it
// and resets the stream): its CloseSend sends no end of input, and the
// handler's Recv fails with Canceled, never io.EOF, so that a handler
// that reads to the end does not take a truncated request for a whole
// one. An Inline handler whose client leaves before driving it never
// runs (see Inline); one that runs must see the same.
func TestClientSendOverLimitEndsCallAsGRPC(t *testing.T) {
	for _, kind := range []struct {
		name string
		open func(ctx context.Context, c echov1.EchoClient) (grpc.ClientStream, error)
	}{
		{"client-stream", func(ctx context.Context, c echov1.EchoClient) (grpc.ClientStream, error) { return c.Collect(ctx) }},
		{"bidi", func(ctx context.Context, c echov1.EchoClient) (grpc.ClientStream, error) { return c.Update(ctx) }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			handlerSaw := make(chan string, 1)
			recvAll := func(s grpc.ServerStream) error {
				for n := 0; ; n++ {
					if err := s.RecvMsg(&echov1.EchoRequest{}); err != nil {
						what := "io.EOF"
						if !errors.Is(err, io.EOF) {
							what = status.Code(err).String()
						}
						handlerSaw <- fmt.Sprintf("%d messages, then %s", n, what)
						return err
					}
				}
			}
			srv := &funcEcho{
				collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error { return recvAll(s) },
				update:  func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error { return recvAll(s) },
			}
			run := func(t *testing.T, c echov1.EchoClient) string {
				s, err := kind.open(timeoutCtx(t), c)
				if err != nil {
					t.Fatal(err)
				}
				sendErr := s.SendMsg(&echov1.EchoRequest{Text: strings.Repeat("a", 200)})
				closeErr := s.CloseSend()
				recvErr := s.RecvMsg(&echov1.EchoResponse{})
				return fmt.Sprintf("send %v, close-send %v, recv %v", status.Code(sendErr), closeErr, status.Code(recvErr))
			}
			limit := grpc.MaxCallSendMsgSize(100)
			want := run(t, echoOracle(t, srv, nil, grpc.WithDefaultCallOptions(limit)))
			wantSaw := receive(t, handlerSaw, "grpc-go's handler to end")
			t.Logf("grpc-go: %s; its handler saw %s", want, wantSaw)
			forEachMode(t, func(t *testing.T, m testMode) {
				c, ch := newEcho(t, m, srv, inproc.WithDefaultCallOptions(limit))
				if got := run(t, c); got != want {
					t.Errorf("inproc: %s\ngrpc-go: %s", got, want)
				}
				ch.GracefulStop() // the handler, if it runs, has ended
				select {
				case saw := <-handlerSaw:
					if saw != wantSaw {
						t.Errorf("the handler saw %s; grpc-go's %s", saw, wantSaw)
					}
				default:
					if isIsolated(t, m) {
						t.Errorf("the handler did not run")
					}
				}
			})
		})
	}
}
