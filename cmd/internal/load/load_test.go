package load

import (
	"context"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/cmd/internal/callerr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestLoadStatistics runs a load of calls with known latencies and errors
// and checks each statistic: nearest-rank percentiles over the calls that
// succeeded, and the errors by code, most frequent first.
func TestLoadStatistics(t *testing.T) {
	calls := 0
	r := (Spec{N: 110, C: 1}).Run(context.Background(), func(context.Context) error {
		calls++
		switch {
		case calls > 104:
			return status.Error(codes.Unavailable, "down")
		case calls > 100:
			return status.Error(codes.DeadlineExceeded, "slow")
		}
		return nil
	})
	if r.Calls != 110 || r.Failed() != 10 || len(r.Latencies) != 100 {
		t.Fatalf("calls %d, failed %d, latencies %d; want 110, 10, 100", r.Calls, r.Failed(), len(r.Latencies))
	}
	if got := r.ErrorCounts(); got != "Unavailable 6, DeadlineExceeded 4" {
		t.Errorf("errorCounts %q", got)
	}
	if got := callerr.Message(r.FirstErr[codes.Unavailable]); got != "down" {
		t.Errorf("the first Unavailable error says %q", got)
	}

	// Percentiles and the mean, on known latencies: 1..100 ms.
	r.Latencies = r.Latencies[:0]
	for i := 1; i <= 100; i++ {
		r.Latencies = append(r.Latencies, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 90: 90 * time.Millisecond, 99: 99 * time.Millisecond, 99.5: 100 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := r.Percentile(p); got != want {
			t.Errorf("p%g = %v, want %v", p, got, want)
		}
	}
	if got, want := r.Mean(), 50500*time.Microsecond; got != want {
		t.Errorf("mean %v, want %v", got, want)
	}
	if got := (Result{}).Percentile(50); got != 0 {
		t.Errorf("p50 of nothing = %v", got)
	}
}

// TestTakeCancelled checks that the calls Canceled by the end of ctx
// leave the result, and that while ctx lives a Canceled call stays an
// error.
func TestTakeCancelled(t *testing.T) {
	result := func() Result {
		cancelled := status.Error(codes.Canceled, "cancelled")
		return Result{
			Calls:    5,
			Errors:   map[codes.Code]int{codes.Canceled: 2, codes.Unavailable: 1},
			FirstErr: map[codes.Code]error{codes.Canceled: cancelled, codes.Unavailable: status.Error(codes.Unavailable, "down")},
		}
	}
	r := result()
	if n := r.TakeCancelled(context.Background()); n != 0 || r.Calls != 5 || r.Failed() != 3 {
		t.Errorf("while ctx lives: took %d, calls %d, failed %d; want 0, 5, 3", n, r.Calls, r.Failed())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = result()
	if n := r.TakeCancelled(ctx); n != 2 || r.Calls != 3 || r.Failed() != 1 || r.FirstErr[codes.Canceled] != nil {
		t.Errorf("after ctx ended: took %d, calls %d, failed %d, first Canceled %v; want 2, 3, 1, nil", n, r.Calls, r.Failed(), r.FirstErr[codes.Canceled])
	}
}
