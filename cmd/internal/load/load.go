// Package load makes calls, many at a time, and measures each.
//
// It is the load generator of localgrpc call -n and localgrpc measure.
// It knows nothing of the call it makes: a call is a function of a
// context that returns the call's error.
package load

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

// A Spec is how many calls to make and how.
// Its fields are the flags -n, -c, --warmup and --timeout.
type Spec struct {
	N       int           // calls measured
	C       int           // calls at a time
	Warmup  int           // calls made first and not measured
	Timeout time.Duration // of each call; 0 is none
}

// Check says what is wrong with the flags that gave s, if anything.
func (s Spec) Check() error {
	switch {
	case s.N < 1:
		return fmt.Errorf("-n %d: it must be at least 1", s.N)
	case s.C < 1:
		return fmt.Errorf("-c %d: it must be at least 1", s.C)
	case s.C > s.N:
		return fmt.Errorf("-c %d is more calls at a time than -n %d calls", s.C, s.N)
	case s.Warmup < 0:
		return fmt.Errorf("--warmup %d: it must be 0 or more", s.Warmup)
	}
	return nil
}

// A Result is what a load measured.
type Result struct {
	Calls     int                  // calls made, as many as asked unless interrupted
	Elapsed   time.Duration        // from the first call's start to the last one's end
	Latencies []time.Duration      // of the calls that succeeded, sorted
	Errors    map[codes.Code]int   // how many calls failed, by code
	FirstErr  map[codes.Code]error // the first error of each code, to show
}

// TakeCancelled takes out of r the calls that the end of ctx cancelled
// in flight, and returns how many.
// Those calls neither failed nor completed, so they count neither as
// errors nor as calls made.
// While ctx lives, a Canceled call is an error like any other.
func (r *Result) TakeCancelled(ctx context.Context) int {
	if ctx.Err() == nil {
		return 0
	}
	n := r.Errors[codes.Canceled]
	delete(r.Errors, codes.Canceled)
	delete(r.FirstErr, codes.Canceled)
	r.Calls -= n
	return n
}

// Run makes the calls, C at a time, and measures each.
// It stops early, with what it measured, if ctx ends.
func (s Spec) Run(ctx context.Context, call func(ctx context.Context) error) Result {
	s.calls(ctx, s.Warmup, call)
	start := time.Now()
	r := s.calls(ctx, s.N, call)
	r.Elapsed = time.Since(start)
	slices.Sort(r.Latencies)
	return r
}

// calls makes n calls on s.C goroutines, which it waits for. Each takes
// its next call from a shared count, on its own: a call handed over
// through a channel woke the handing goroutine on every call, a cost a
// benchmark loop does not have, and which an in-process call (a few µs)
// showed several times over.
func (s Spec) calls(ctx context.Context, n int, call func(ctx context.Context) error) Result {
	r := Result{Errors: map[codes.Code]int{}, FirstErr: map[codes.Code]error{}}
	var mu sync.Mutex
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range min(s.C, n) {
		wg.Go(func() {
			for ctx.Err() == nil && taken.Add(1) <= int64(n) {
				callCtx, cancel := ctx, context.CancelFunc(func() {})
				if s.Timeout > 0 {
					callCtx, cancel = context.WithTimeout(ctx, s.Timeout)
				}
				start := time.Now()
				err := call(callCtx)
				took := time.Since(start)
				cancel()
				mu.Lock()
				r.Calls++
				if err == nil {
					r.Latencies = append(r.Latencies, took)
				} else {
					code := callerr.Code(err)
					if r.Errors[code]++; r.FirstErr[code] == nil {
						r.FirstErr[code] = err
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return r
}

// Rate is the calls made per second, 0 if none were.
func (r Result) Rate() float64 {
	if r.Calls == 0 {
		return 0
	}
	return float64(r.Calls) / r.Elapsed.Seconds()
}

// Failed is how many calls failed.
func (r Result) Failed() int {
	n := 0
	for _, c := range r.Errors {
		n += c
	}
	return n
}

// Mean is the mean latency of the calls that succeeded.
func (r Result) Mean() time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range r.Latencies {
		sum += d
	}
	return sum / time.Duration(len(r.Latencies))
}

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of the
// latencies of the calls that succeeded.
func (r Result) Percentile(p float64) time.Duration {
	n := len(r.Latencies)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(n) * p / 100))
	return r.Latencies[min(max(rank, 1), n)-1]
}

// codesByCount are the error codes seen, most frequent first.
func (r Result) codesByCount() []codes.Code {
	cs := make([]codes.Code, 0, len(r.Errors))
	for c := range r.Errors {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if r.Errors[cs[i]] != r.Errors[cs[j]] {
			return r.Errors[cs[i]] > r.Errors[cs[j]]
		}
		return cs[i] < cs[j]
	})
	return cs
}

// ErrorCounts is "Unavailable 2, DeadlineExceeded 1", or "none".
func (r Result) ErrorCounts() string {
	var parts []string
	for _, c := range r.codesByCount() {
		parts = append(parts, fmt.Sprintf("%v %d", c, r.Errors[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Write prints the measurement as `call -n` shows it.
func (r Result) Write(w io.Writer, s Spec) {
	fmt.Fprintf(w, "count   %d calls, %d at a time, in %s (%.0f calls/s)\n", r.Calls, s.C, FormatDuration(r.Elapsed), r.Rate())
	if len(r.Latencies) > 0 {
		fmt.Fprintf(w, "mean    %s\n", FormatDuration(r.Mean()))
		for _, p := range []float64{50, 90, 99} {
			fmt.Fprintf(w, "p%-6g %s\n", p, FormatDuration(r.Percentile(p)))
		}
		fmt.Fprintf(w, "max     %s\n", FormatDuration(r.Latencies[len(r.Latencies)-1]))
	}
	fmt.Fprintf(w, "errors  %d", r.Failed())
	for _, c := range r.codesByCount() {
		fmt.Fprintf(w, "\n  %-18v %d, the first: %s", c, r.Errors[c], callerr.Message(r.FirstErr[c]))
	}
	fmt.Fprintln(w)
}

// FormatDuration is d to 4 significant digits: "123.4µs".
func FormatDuration(d time.Duration) string {
	return benchunit.Scale(d.Seconds(), benchunit.Decimal) + "s"
}
