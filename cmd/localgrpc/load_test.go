package main

import (
	"context"
	"errors"
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
	l := load{n: 110, c: 1}
	r := l.run(context.Background(), func(context.Context) error {
		calls++
		switch {
		case calls > 104:
			return status.Error(codes.Unavailable, "down")
		case calls > 100:
			return status.Error(codes.DeadlineExceeded, "slow")
		}
		return nil
	})
	if r.calls != 110 || r.failed() != 10 || len(r.latencies) != 100 {
		t.Fatalf("calls %d, failed %d, latencies %d; want 110, 10, 100", r.calls, r.failed(), len(r.latencies))
	}
	if got := r.errorCounts(); got != "Unavailable 6, DeadlineExceeded 4" {
		t.Errorf("errorCounts %q", got)
	}
	if got := callerr.Message(r.firstErr[codes.Unavailable]); got != "down" {
		t.Errorf("the first Unavailable error says %q", got)
	}

	// Percentiles and the mean, on known latencies: 1..100 ms.
	r.latencies = r.latencies[:0]
	for i := 1; i <= 100; i++ {
		r.latencies = append(r.latencies, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 90: 90 * time.Millisecond, 99: 99 * time.Millisecond, 99.5: 100 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := r.percentile(p); got != want {
			t.Errorf("p%g = %v, want %v", p, got, want)
		}
	}
	if got, want := r.mean(), 50500*time.Microsecond; got != want {
		t.Errorf("mean %v, want %v", got, want)
	}
	if got := (loadResult{}).percentile(50); got != 0 {
		t.Errorf("p50 of nothing = %v", got)
	}
	if got := callerr.Code(errors.New("plain")); got != codes.Unknown {
		t.Errorf("codeOf a plain error = %v", got)
	}
	if got := callerr.Code(context.DeadlineExceeded); got != codes.DeadlineExceeded {
		t.Errorf("codeOf context.DeadlineExceeded = %v", got)
	}
}
