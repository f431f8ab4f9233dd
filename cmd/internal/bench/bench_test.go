package bench_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/bench"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// run runs the cases of one workload as sub-benchmarks of b.
func run(b *testing.B, workload string) {
	for _, c := range bench.Cases(bench.Config{}) {
		if c.Workload == workload {
			b.Run(c.Name(), c.Run)
		}
	}
}

// BenchmarkListStrings is workload W1; compare with
// `benchstat -col /impl`.
func BenchmarkListStrings(b *testing.B) { run(b, bench.ListStrings) }

// BenchmarkUnary is workload W2.
func BenchmarkUnary(b *testing.B) { run(b, bench.Unary) }

// BenchmarkPingPong is workload W3.
func BenchmarkPingPong(b *testing.B) { run(b, bench.PingPong) }

// BenchmarkFanOut is W1 through a fanout.Proxy; compare backends=1 with
// BenchmarkListStrings/impl=IMPL/respSize=10.
func BenchmarkFanOut(b *testing.B) { run(b, bench.FanOut) }

// BenchmarkBatching is the article's book store, one book per message
// against 64 (package batch); compare batch=1 with batch=64.
func BenchmarkBatching(b *testing.B) { run(b, bench.Batching) }

// BenchmarkSeries is Thanos's Store API on gogoproto messages; compare
// the inproc impls with unix and with iter, Thanos's own client.
func BenchmarkSeries(b *testing.B) { run(b, bench.Series) }

// TestCases runs every case for one op on small inputs, with one caller
// and with several, so that `go test` proves each impl works and leaks no
// goroutine.
func TestCases(t *testing.T) {
	prev, err := bench.SetBenchtime("1x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = bench.SetBenchtime(prev) })

	for _, cfg := range []bench.Config{
		{Strings: 100, StringSize: 10},
		{Strings: 100, StringSize: 10, Callers: 3},
	} {
		for _, c := range bench.Cases(cfg) {
			t.Run(c.Workload+"/"+c.Name(), func(t *testing.T) {
				// The case runs on a goroutine of its own so that a hang
				// fails this case, with every goroutine's stack, rather
				// than the whole run at -timeout.
				result := make(chan error, 1)
				go func() {
					_, err := c.Benchmark()
					result <- err
				}()
				select {
				case err := <-result:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(10 * time.Second):
					stacks := make([]byte, 1<<20)
					t.Fatalf("hangs; goroutines:\n%s", stacks[:runtime.Stack(stacks, true)])
				}
				goleak.VerifyNone(t)
			})
		}
	}
}
