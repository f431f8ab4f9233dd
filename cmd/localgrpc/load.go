package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/callerr"
	"golang.org/x/perf/benchunit"
	"google.golang.org/grpc/codes"
)

// load is how many calls to make and how.
type load struct {
	n       int           // calls measured
	c       int           // calls at a time
	warmup  int           // calls made first and not measured
	timeout time.Duration // of each call; 0 is none
}

// check says what is wrong with the flags that gave l, if anything.
func (l load) check() error {
	switch {
	case l.n < 1:
		return fmt.Errorf("-n %d: it must be at least 1", l.n)
	case l.c < 1:
		return fmt.Errorf("-c %d: it must be at least 1", l.c)
	case l.c > l.n:
		return fmt.Errorf("-c %d is more calls at a time than -n %d calls", l.c, l.n)
	case l.warmup < 0:
		return fmt.Errorf("--warmup %d: it must be 0 or more", l.warmup)
	}
	return nil
}

// loadResult is what a load measured.
type loadResult struct {
	calls     int             // calls made, as many as asked unless interrupted
	elapsed   time.Duration   // from the first call's start to the last one's end
	latencies []time.Duration // of the calls that succeeded, sorted
	errors    map[codes.Code]int
	firstErr  map[codes.Code]error // the first error of each code, to show
}

// run makes the calls, c at a time, and measures each. It stops early, with
// what it measured, if ctx ends.
func (l load) run(ctx context.Context, call func(ctx context.Context) error) loadResult {
	l.calls(ctx, l.warmup, call)
	start := time.Now()
	r := l.calls(ctx, l.n, call)
	r.elapsed = time.Since(start)
	slices.Sort(r.latencies)
	return r
}

// calls makes n calls on l.c goroutines, which it waits for. Each takes
// its next call from a shared count, on its own: a call handed over
// through a channel woke the handing goroutine on every call, a cost a
// benchmark loop does not have, and which an in-process call (a few µs)
// showed several times over.
func (l load) calls(ctx context.Context, n int, call func(ctx context.Context) error) loadResult {
	r := loadResult{errors: map[codes.Code]int{}, firstErr: map[codes.Code]error{}}
	var mu sync.Mutex
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range min(l.c, n) {
		wg.Go(func() {
			for ctx.Err() == nil && taken.Add(1) <= int64(n) {
				callCtx, cancel := ctx, context.CancelFunc(func() {})
				if l.timeout > 0 {
					callCtx, cancel = context.WithTimeout(ctx, l.timeout)
				}
				start := time.Now()
				err := call(callCtx)
				took := time.Since(start)
				cancel()
				mu.Lock()
				r.calls++
				if err == nil {
					r.latencies = append(r.latencies, took)
				} else {
					code := callerr.Code(err)
					if r.errors[code]++; r.firstErr[code] == nil {
						r.firstErr[code] = err
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return r
}

// rate is the calls made per second, 0 if none were.
func (r loadResult) rate() float64 {
	if r.calls == 0 {
		return 0
	}
	return float64(r.calls) / r.elapsed.Seconds()
}

// failed is how many calls failed.
func (r loadResult) failed() int {
	n := 0
	for _, c := range r.errors {
		n += c
	}
	return n
}

// mean is the mean latency of the calls that succeeded.
func (r loadResult) mean() time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range r.latencies {
		sum += d
	}
	return sum / time.Duration(len(r.latencies))
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of the
// latencies of the calls that succeeded.
func (r loadResult) percentile(p float64) time.Duration {
	n := len(r.latencies)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(n) * p / 100))
	return r.latencies[min(max(rank, 1), n)-1]
}

// codesByCount are the error codes seen, most frequent first.
func (r loadResult) codesByCount() []codes.Code {
	cs := make([]codes.Code, 0, len(r.errors))
	for c := range r.errors {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if r.errors[cs[i]] != r.errors[cs[j]] {
			return r.errors[cs[i]] > r.errors[cs[j]]
		}
		return cs[i] < cs[j]
	})
	return cs
}

// errorCounts is "Unavailable 2, DeadlineExceeded 1", or "none".
func (r loadResult) errorCounts() string {
	var parts []string
	for _, c := range r.codesByCount() {
		parts = append(parts, fmt.Sprintf("%v %d", c, r.errors[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// write prints the measurement as `call -n` shows it.
func (r loadResult) write(w io.Writer, l load) {
	fmt.Fprintf(w, "count   %d calls, %d at a time, in %s (%.0f calls/s)\n", r.calls, l.c, formatDuration(r.elapsed), r.rate())
	if len(r.latencies) > 0 {
		fmt.Fprintf(w, "mean    %s\n", formatDuration(r.mean()))
		for _, p := range []float64{50, 90, 99} {
			fmt.Fprintf(w, "p%-6g %s\n", p, formatDuration(r.percentile(p)))
		}
		fmt.Fprintf(w, "max     %s\n", formatDuration(r.latencies[len(r.latencies)-1]))
	}
	fmt.Fprintf(w, "errors  %d", r.failed())
	for _, c := range r.codesByCount() {
		fmt.Fprintf(w, "\n  %-18v %d, the first: %s", c, r.errors[c], callerr.Message(r.firstErr[c]))
	}
	fmt.Fprintln(w)
}

// formatDuration is d to 4 significant digits: "123.4µs".
func formatDuration(d time.Duration) string {
	return benchunit.Scale(d.Seconds(), benchunit.Decimal) + "s"
}
