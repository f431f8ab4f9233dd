package fanout_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// hiccupServer is a ListStrings replica that sends 10 strings, the first
// late by delay in a fraction of its calls: the tail hedging cuts.
type hiccupServer struct {
	listv1.UnimplementedListStringsServer
	fraction float64
	delay    time.Duration
}

func (h hiccupServer) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	if rand.Float64() < h.fraction {
		select {
		case <-time.After(h.delay):
		case <-s.Context().Done():
			return s.Context().Err()
		}
	}
	for i := range 10 {
		if err := s.Send(&listv1.ListResponse{Strings: []string{fmt.Sprint(i)}}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkHedging is the tail at scale in small: 4 shards of 2 replicas,
// one replica of each answering its first response 20 ms late in 5% of
// calls. It reports the latency percentiles of whole proxy streams and the
// extra calls hedging made, as a percentage of the calls without it. Run
// it with enough calls for a p99, e.g. -benchtime=3000x.
func BenchmarkHedging(b *testing.B) {
	policies := []struct {
		name string
		opts []fanout.Option
	}{
		{"off", nil},
		{"delay=2ms", []fanout.Option{fanout.WithHedging(fanout.Hedging{Delay: 2 * time.Millisecond, Budget: 0.1})}},
		{"percentile=95", []fanout.Option{fanout.WithHedging(fanout.Hedging{Delay: 2 * time.Millisecond, Percentile: 95, Budget: 0.1})}},
	}
	for _, policy := range policies {
		b.Run("hedging="+policy.name, func(b *testing.B) {
			var backends []fanout.Backend
			for shard := range 4 {
				for r, srv := range []hiccupServer{{}, {fraction: 0.05, delay: 20 * time.Millisecond}} {
					ch := inproc.New(inproc.WithCopy(inproc.Share))
					b.Cleanup(ch.Stop)
					listv1.RegisterListStringsServer(ch, srv)
					backends = append(backends, fanout.Backend{Name: fmt.Sprintf("%d-%d", shard, r), Shard: fmt.Sprint(shard), Conn: ch})
				}
			}
			p, err := fanout.New(open, backends, policy.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var latencies []time.Duration
			for b.Loop() {
				start := time.Now()
				n := 0
				for _, err := range p.Stream(context.Background(), &listv1.ListRequest{}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				latencies = append(latencies, time.Since(start))
				if n != 40 {
					b.Fatalf("%d responses, want 40", n)
				}
			}
			slices.Sort(latencies)
			at := func(q float64) float64 {
				return float64(latencies[int(q*float64(len(latencies)-1))].Nanoseconds())
			}
			b.ReportMetric(at(0.50), "p50-ns")
			b.ReportMetric(at(0.90), "p90-ns")
			b.ReportMetric(at(0.99), "p99-ns")
			var calls, hedges int64
			for _, s := range p.Stats() {
				calls += s.Calls
				hedges += s.Hedges
			}
			b.ReportMetric(100*float64(hedges)/float64(calls-hedges), "extra-calls-%")
		})
	}
}
