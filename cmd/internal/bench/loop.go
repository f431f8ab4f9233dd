package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

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

// timed runs op once untimed — which connects, warms up and checks that
// the impl works — then times it with b.Loop.
func timed(b *testing.B, op func() error) error {
	if err := op(); err != nil {
		return fmt.Errorf("first call: %w", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := op(); err != nil {
			return err
		}
	}
	return nil
}

// together returns one op that runs all of ops at once, a goroutine each,
// and waits for them: Config.Callers concurrent calls. A single op runs on
// the benchmark's goroutine, so that one caller measures no goroutine.
func together(ops []func() error) func() error {
	if len(ops) == 1 {
		return ops[0]
	}
	errs := make([]error, len(ops))
	return func() error {
		var wg sync.WaitGroup
		for i, op := range ops {
			wg.Go(func() { errs[i] = op() })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}
