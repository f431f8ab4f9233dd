//go:build linux

package shm_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// BenchmarkUnary compares a small Echo Get over the framing, both sides
// in this process, with grpc-go over a unix socket.
func BenchmarkUnary(b *testing.B) {
	register := func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }
	b.Run("impl=shm-socket", func(b *testing.B) {
		benchUnary(b, echov1.NewEchoClient(pair(b, register)))
	})
	b.Run("impl=grpc-unix", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "s")
		l, err := net.Listen("unix", path)
		if err != nil {
			b.Fatal(err)
		}
		s := grpc.NewServer()
		register(s)
		go s.Serve(l)
		defer s.Stop()
		cc, err := grpc.NewClient("unix:"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		benchUnary(b, echov1.NewEchoClient(cc))
	})
}

func benchUnary(b *testing.B, c echov1.EchoClient) {
	ctx := context.Background()
	req := &echov1.EchoRequest{Text: "hello"}
	if _, err := c.Get(ctx, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnary1MiB is BenchmarkUnary with a 1 MiB request and response.
func BenchmarkUnary1MiB(b *testing.B) {
	register := func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }
	c := echov1.NewEchoClient(pair(b, register))
	req := &echov1.EchoRequest{Text: strings.Repeat("m", 1<<20)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, req, grpc.MaxCallRecvMsgSize(8<<20)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerStream is an Echo Expand of 10,000 words: a server
// stream of small messages.
func BenchmarkServerStream(b *testing.B) {
	register := func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, echo.Server{}) }
	c := echov1.NewEchoClient(pair(b, register))
	req := &echov1.EchoRequest{Text: strings.Repeat("word ", 10000)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := c.Expand(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			if _, err := s.Recv(); err != nil {
				break
			}
			n++
		}
		if n != 10000 {
			b.Fatalf("%d messages", n)
		}
	}
}
