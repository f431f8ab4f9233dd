package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/echo"
)

// setUp starts im for a case and returns the clients and the context the
// case's calls use. The context ends last in b's cleanup, after the
// workload has closed its streams and im has stopped its servers, so that
// closing is graceful and cancellation is a backstop.
func setUp(b *testing.B, im impl, list *listServer) (clients, context.Context, error) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	if list == nil {
		list = &listServer{} // registered, never called
	}
	cl, err := im.clients(b, servers{list: list, echo: echo.Server{}})
	if err != nil {
		return clients{}, nil, fmt.Errorf("%s: %w", im.name, err)
	}
	return cl, ctx, nil
}

// timed runs ops once untimed — which connects, warms up and checks that
// the impl works — then times them. One op runs in a b.Loop on the
// benchmark's goroutine, so that one caller measures no goroutine and no
// clock. Several are callers under load (see underLoad): time/op is then
// the time per call, so that the throughput of several callers against
// one is about the inverse ratio of their time/op, and the latency of one
// call is reported too, its median (p50-ns) and its 99th percentile
// (p99-ns), what a caller under that load waits.
func timed(b *testing.B, ops []func() error) error {
	for _, op := range ops {
		if err := op(); err != nil {
			return fmt.Errorf("first call: %w", err)
		}
	}
	if len(ops) > 1 {
		return underLoad(b, ops)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := ops[0](); err != nil {
			return err
		}
	}
	return nil
}

// underLoad runs each op in a loop on a goroutine of its own until they
// have made b.N calls between them, as testing.B.RunParallel does but with
// exactly one goroutine per caller: a load test's concurrent callers, each
// calling again as soon as its call returns. (b.Loop counts the iterations
// of one goroutine, so this counts b.N itself, and the case runs again for
// each b.N the testing package tries.) Each call is timed into a slot of
// its own, made before the timer starts, so that timing allocates nothing;
// the two clock reads a call (some 40 ns) are in time/op too, which the
// single caller's loop does not pay.
func underLoad(b *testing.B, ops []func() error) error {
	took := make([]time.Duration, b.N)
	errs := make([]error, len(ops))
	var calls atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() {
			for {
				call := calls.Add(1) - 1
				if call >= int64(b.N) {
					return
				}
				start := time.Now()
				if err := op(); err != nil {
					errs[i] = err
					return
				}
				took[call] = time.Since(start)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	reportLatency(b, took)
	return nil
}

// reportLatency reports the median and the 99th percentile of took.
func reportLatency(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

// counting is the ops of callers callers, each a call that returns how many
// items it received, which must be want (of what, for errors).
func counting(callers, want int, what string, call func() (int, error)) []func() error {
	ops := make([]func() error, callers)
	for i := range ops {
		ops[i] = func() error {
			n, err := call()
			if err != nil {
				return err
			}
			if n != want {
				return fmt.Errorf("received %d %s, want %d", n, what, want)
			}
			return nil
		}
	}
	return ops
}
