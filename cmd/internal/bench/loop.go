package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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
// the impl works — then times them with b.Loop, all at once as together
// runs them. With several callers it also reports the latency of one
// call: its median (p50-ns) and its 99th percentile (p99-ns), what a
// caller under that load waits.
func timed(b *testing.B, ops []func() error) error {
	op, lat := together(ops)
	if err := op(); err != nil {
		return fmt.Errorf("first call: %w", err)
	}
	lat.reset()
	b.ReportAllocs()
	for b.Loop() {
		if err := op(); err != nil {
			return err
		}
	}
	lat.report(b)
	return nil
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

// together returns one op that runs all of ops at once, a goroutine each,
// and waits for them: Config.Callers concurrent calls, each timed into
// the latencies. A single op runs on the benchmark's goroutine, untimed,
// so that one caller measures no goroutine and no clock.
func together(ops []func() error) (func() error, *latencies) {
	lat := &latencies{}
	if len(ops) == 1 {
		return ops[0], lat
	}
	errs := make([]error, len(ops))
	took := make([]time.Duration, len(ops))
	return func() error {
		var wg sync.WaitGroup
		for i, op := range ops {
			wg.Go(func() {
				start := time.Now()
				errs[i] = op()
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		lat.add(took)
		return errors.Join(errs...)
	}, lat
}

// latencies are the times the calls of several callers took.
type latencies struct{ took []time.Duration }

func (l *latencies) add(took []time.Duration) { l.took = append(l.took, took...) }
func (l *latencies) reset()                   { l.took = l.took[:0] }

// report reports the median and the 99th percentile, if there are calls.
func (l *latencies) report(b *testing.B) {
	if len(l.took) == 0 {
		return
	}
	slices.Sort(l.took)
	at := func(q float64) float64 { return float64(l.took[int(q*float64(len(l.took)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}
