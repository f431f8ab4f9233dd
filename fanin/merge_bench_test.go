package fanin_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/fanin"
)

var mergeStrategies = []strategy{
	{"goroutine-per-input", withoutContext(mergeGoroutinePerInput[int])},
	{"reflect-select", withoutContext(mergeReflectSelect[int])},
	{"groups-of-4", withoutContext(mergeGroupsOfFour[int])},
	{"polling-loop", withoutContext(mergePollingLoop[int])},
	{"fanin.Merge", fanin.Merge[int]},
}

// BenchmarkMerge is the benchmark of the fan-in comparison of the x-dvr dev
// blog (https://x-dvr.github.io/dev-blog/posts/compare-fan-in): a worker pool
// (one source per CPU), metrics collection (100 sources) and a huge event
// system (1,000 sources), each source sending 10 values on an unbuffered
// channel. Each op starts the senders, merges and drains. cpu-ns/op is the
// process's user and system time per op, which shows a strategy that spins.
func BenchmarkMerge(b *testing.B) {
	benchmarkMerge(b, 0)
}

// BenchmarkMergeBursty is BenchmarkMerge with bursty sources: each sends its
// 10 values into a channel buffered 5, so up to 5 values wait in an input at
// once and a sender runs ahead of the merge instead of handing each value
// over in step with it.
func BenchmarkMergeBursty(b *testing.B) {
	benchmarkMerge(b, 5)
}

func benchmarkMerge(b *testing.B, buffer int) {
	const messages = 10
	for _, sources := range []int{runtime.NumCPU(), 100, 1000} {
		for _, s := range mergeStrategies {
			b.Run(fmt.Sprintf("sources=%d/impl=%s", sources, s.name), func(b *testing.B) {
				b.ReportAllocs()
				want := sources * messages * (messages - 1) / 2
				ins := make([]<-chan int, sources)
				start := cpuTime(b)
				for b.Loop() {
					for i := range ins {
						ins[i] = send(messages, buffer)
					}
					sum := 0
					for v := range s.merge(b.Context(), ins...) {
						sum += v
					}
					if sum != want {
						b.Fatalf("sum %d, want %d", sum, want)
					}
				}
				b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// send returns a channel with the given buffer on which a new goroutine sends
// 0 to n-1 and then closes it.
func send(n, buffer int) <-chan int {
	c := make(chan int, buffer)
	go func() {
		for i := range n {
			c <- i
		}
		close(c)
	}()
	return c
}

// cpuTime is the user and system time this process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkMergeOneAtATime is the other end from BenchmarkMerge: each op
// sends one value on one of the inputs, in turn, and waits for it to come
// out, so every value finds the merge idle. It shows what a strategy costs
// per value when sources are quiet, as in a metrics system where most
// sources send rarely. reflect.Select is left out: it costs milliseconds per
// value at these sizes.
func BenchmarkMergeOneAtATime(b *testing.B) {
	for _, sources := range []int{runtime.NumCPU(), 100, 1000} {
		for _, s := range mergeStrategies {
			if s.name == "reflect-select" {
				continue
			}
			b.Run(fmt.Sprintf("sources=%d/impl=%s", sources, s.name), func(b *testing.B) {
				b.ReportAllocs()
				chans := make([]chan int, sources)
				ins := make([]<-chan int, sources)
				for i := range chans {
					chans[i] = make(chan int)
					ins[i] = chans[i]
				}
				out := s.merge(b.Context(), ins...)
				start := cpuTime(b)
				n := 0
				for b.Loop() {
					chans[n%sources] <- n
					if v := <-out; v != n {
						b.Fatalf("got %d, want %d", v, n)
					}
					n++
				}
				b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
				for _, c := range chans {
					close(c)
				}
				for range out {
				}
			})
		}
	}
}
