package localgrpc_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// benchList is the child server's ListStrings: 10,000 strings of 100
// bytes, built before any call, sent as many per message as the call's
// x-resp-size metadata says (1, 10 or 100).
type benchList struct {
	listv1.UnimplementedListStringsServer
	resps map[int][]*listv1.ListResponse
}

func newBenchList() *benchList {
	all := make([]string, 10000)
	for i := range all {
		s := strconv.Itoa(i)
		all[i] = s + strings.Repeat("x", 100-len(s))
	}
	l := &benchList{resps: map[int][]*listv1.ListResponse{}}
	for _, per := range []int{1, 10, 100} {
		for chunk := range slices.Chunk(all, per) {
			l.resps[per] = append(l.resps[per], &listv1.ListResponse{Strings: chunk})
		}
	}
	return l
}

func (l *benchList) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	per := 1
	if v := metadata.ValueFromIncomingContext(s.Context(), "x-resp-size"); len(v) == 1 {
		per, _ = strconv.Atoi(v[0])
	}
	for _, r := range l.resps[per] {
		if err := s.Send(r); err != nil {
			return err
		}
	}
	return nil
}

// crossProcessImpls starts a child server and returns a connection to it
// per transport: grpc-go over a unix and an abstract socket, and shm:.
func crossProcessImpls(b *testing.B) []struct {
	name string
	cc   grpc.ClientConnInterface
} {
	unixPath, abstractName, shmName := b.TempDir()+"/s.sock", uniqueName(nil), uniqueName(nil)
	childServer(b, "unix:"+unixPath, "unix:@"+abstractName, "shm:@"+shmName)
	grpcConn := func(target string) grpc.ClientConnInterface {
		cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cc.Close() })
		return cc
	}
	shmConn, err := localgrpc.NewClient("shm:@" + shmName)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { shmConn.Close() })
	return []struct {
		name string
		cc   grpc.ClientConnInterface
	}{
		{"grpc-unix", grpcConn("unix:" + unixPath)},
		{"grpc-abstract", grpcConn("unix-abstract:" + abstractName)},
		{"shm", shmConn},
	}
}

// BenchmarkCrossProcess makes the calls to a server in a child
// process over each transport: a small Echo Get, a 1 MiB one, a ping-pong
// on an open stream, and ListStrings of 10,000 strings 1 or 100 to a
// message.
func BenchmarkCrossProcess(b *testing.B) {
	impls := crossProcessImpls(b)
	small := &echov1.EchoRequest{Text: "hello"}
	big := &echov1.EchoRequest{Text: strings.Repeat("m", 1<<20)}
	workloads := []struct {
		name string
		run  func(b *testing.B, cc grpc.ClientConnInterface)
	}{
		{"workload=Unary", func(b *testing.B, cc grpc.ClientConnInterface) { benchGet(b, echov1.NewEchoClient(cc), small) }},
		{"workload=Unary1MiB", func(b *testing.B, cc grpc.ClientConnInterface) { benchGet(b, echov1.NewEchoClient(cc), big) }},
		{"workload=PingPong", benchPingPong},
		{"workload=ListStrings/respSize=1", func(b *testing.B, cc grpc.ClientConnInterface) { benchListStrings(b, cc, 1) }},
		{"workload=ListStrings/respSize=100", func(b *testing.B, cc grpc.ClientConnInterface) { benchListStrings(b, cc, 100) }},
	}
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			for _, im := range impls {
				b.Run("impl="+im.name, func(b *testing.B) { w.run(b, im.cc) })
			}
		})
	}
}

// BenchmarkCrossProcessConcurrent has 8 callers make small Echo Gets at
// once, and reports the 99th percentile of their latency beside the
// mean.
func BenchmarkCrossProcessConcurrent(b *testing.B) {
	for _, im := range crossProcessImpls(b) {
		b.Run("callers=8/impl="+im.name, func(b *testing.B) {
			c := echov1.NewEchoClient(im.cc)
			req := &echov1.EchoRequest{Text: "hello"}
			ctx := context.Background()
			if _, err := c.Get(ctx, req); err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			var lat []time.Duration
			b.ReportAllocs()
			b.SetParallelism(4) // 8 callers at GOMAXPROCS 2
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					start := time.Now()
					if _, err := c.Get(ctx, req); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(start))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
			if len(lat) > 0 {
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			}
		})
	}
}

func benchGet(b *testing.B, c echov1.EchoClient, req *echov1.EchoRequest) {
	ctx := context.Background()
	if _, err := c.Get(ctx, req, grpc.MaxCallRecvMsgSize(8<<20)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, req, grpc.MaxCallRecvMsgSize(8<<20)); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPingPong(b *testing.B, cc grpc.ClientConnInterface) {
	s, err := echov1.NewEchoClient(cc).Update(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer s.CloseSend()
	req := &echov1.EchoRequest{Text: "ping"}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Send(req); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchListStrings(b *testing.B, cc grpc.ClientConnInterface, per int) {
	c := listv1.NewListStringsClient(cc)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-resp-size", strconv.Itoa(per))
	b.ReportAllocs()
	for b.Loop() {
		s, err := c.List(ctx, &listv1.ListRequest{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			r, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(r.GetStrings())
		}
		if n != 10000 {
			b.Fatalf("%d strings, want 10000", n)
		}
	}
}
