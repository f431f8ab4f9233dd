package localgrpc_test

import (
	"context"
	"testing"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// BenchmarkCrossProcessUnary makes a small Echo Get to a server in a
// child process: grpc-go over a unix and an abstract socket, and the
// shm: transport.
func BenchmarkCrossProcessUnary(b *testing.B) {
	unixAddr, abstractName, shmName := "unix:"+b.TempDir()+"/s.sock", uniqueName(nil), uniqueName(nil)
	childServer(b, unixAddr, "unix:@"+abstractName, "shm:@"+shmName)
	grpcClient := func(b *testing.B, target string) echov1.EchoClient {
		cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cc.Close() })
		return echov1.NewEchoClient(cc)
	}
	b.Run("impl=grpc-unix", func(b *testing.B) { benchGet(b, grpcClient(b, unixAddr)) })
	b.Run("impl=grpc-abstract", func(b *testing.B) { benchGet(b, grpcClient(b, "unix-abstract:"+abstractName)) })
	b.Run("impl=shm", func(b *testing.B) {
		cc, err := localgrpc.NewClient("shm:@" + shmName)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cc.Close() })
		benchGet(b, echov1.NewEchoClient(cc))
	})
}

func benchGet(b *testing.B, c echov1.EchoClient) {
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
