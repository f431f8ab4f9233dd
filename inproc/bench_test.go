package inproc_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// benchEcho returns an Echo client on a new Channel with m's options
// serving srv, stopped when the benchmark ends.
func benchEcho(b *testing.B, m testMode, srv echov1.EchoServer) echov1.EchoClient {
	b.Helper()
	ch := inproc.New(m.opts...)
	b.Cleanup(ch.Stop)
	echov1.RegisterEchoServer(ch, srv)
	return echov1.NewEchoClient(ch)
}

// BenchmarkUnary measures one unary call from start to end.
func BenchmarkUnary(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			c := benchEcho(b, m, echo.Server{})
			ctx := context.Background()
			req := &echov1.EchoRequest{Text: "hello"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Get(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStream measures one bidirectional call from its start to its
// end: a message each way, the end of input and the status.
func BenchmarkStream(b *testing.B) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			c := benchEcho(b, m, echo.Server{})
			ctx := context.Background()
			req := &echov1.EchoRequest{Text: "hello"}
			b.ReportAllocs()
			for b.Loop() {
				s, err := c.Update(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Send(req); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Recv(); err != nil {
					b.Fatal(err)
				}
				if err := s.CloseSend(); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Recv(); !errors.Is(err, io.EOF) {
					b.Fatalf("Recv after the last message: %v, want io.EOF", err)
				}
			}
		})
	}
}

// BenchmarkStreamTrailersOnly measures a call whose handler fails before
// it sends anything, with the client waiting in Header: the status comes
// as trailers only.
func BenchmarkStreamTrailersOnly(b *testing.B) {
	refuse := status.Error(codes.FailedPrecondition, "refused")
	srv := &funcEcho{update: func(grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
		return refuse
	}}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			c := benchEcho(b, m, srv)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s, err := c.Update(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Header(); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Recv(); status.Code(err) != codes.FailedPrecondition {
					b.Fatalf("Recv: %v, want FailedPrecondition", err)
				}
			}
		})
	}
}
