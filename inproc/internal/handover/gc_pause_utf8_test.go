package handover

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
)

// TestUTF8CheckLetsTheCollectorStop sends (with Share: the check and the
// size, no copy) a list of ASCII strings of almost 2 GiB in all, under
// grpc-go's default send limit, over and over on one goroutine, while
// another runs the collector: stopping the world for a collection must
// not wait for the whole list's check, during which every other goroutine
// of the process is already stopped. Go code, such as the check before
// asciiPrefix was assembly (and with -tags purego), is preempted where it
// is within microseconds; an assembly function is never preempted
// asynchronously, and firstInvalidUTF8 hands it the whole list in one
// call, so every stop of the world waits for that call to return.
func TestUTF8CheckLetsTheCollectorStop(t *testing.T) {
	if testing.Short() {
		t.Skip("scans gigabytes")
	}
	one := strings.Repeat("a", 1<<20)
	m := &listv1.ListResponse{Strings: make([]string, 2047)}
	for i := range m.Strings {
		m.Strings[i] = one // 2 GiB less 1 MiB to check, 1 MiB of memory
	}
	var slot Slot
	dir := Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: DefaultMaxSendMsgSize}, Slot: &slot}
	var stop atomic.Bool
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		var err error
		for i := 0; !stop.Load() && err == nil; i++ {
			_, _, err = sendAs(m, Share, dir)
			if i == 0 {
				close(started)
			}
		}
		done <- err
	}()
	<-started
	before := stoppingCounts()
	var worst time.Duration
	for range 20 {
		t0 := time.Now()
		runtime.GC()
		worst = max(worst, time.Since(t0))
	}
	stopping := medianNewStopping(before)
	stop.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	firstInvalidUTF8(m.Strings)
	check := time.Since(t0)
	t.Logf("runtime.GC took up to %v, stopping the world %v at the median; one check of the list takes %v", worst, stopping, check)
	// A stop that waits for the check in flight waits for a part of one
	// check spread evenly over all of it: half a check at the median of
	// forty stops (two a collection), and a quarter or less almost never.
	// One that does not waits for a chunk, or, on a busy machine, for the
	// operating system to run the threads: milliseconds, most of them far
	// fewer, against the tens a check takes. The median is what a busy
	// machine's few long waits leave alone.
	if stopping > max(check/4, 5*time.Millisecond) {
		t.Errorf("stopping the world for a collection took %v at the median, every other goroutine waiting, while one goroutine checked a list's UTF-8 (one check: %v)", stopping, check)
	}
}

const stoppingMetric = "/sched/pauses/stopping/gc:seconds"

// stoppingCounts returns the counts of the histogram of how long the
// collector waited for every goroutine to stop.
func stoppingCounts() []uint64 {
	s := []metrics.Sample{{Name: stoppingMetric}}
	metrics.Read(s)
	return append([]uint64(nil), s[0].Value.Float64Histogram().Counts...)
}

// medianNewStopping returns the upper bound of the bucket of that
// histogram that holds the median of the waits counted since before.
func medianNewStopping(before []uint64) time.Duration {
	s := []metrics.Sample{{Name: stoppingMetric}}
	metrics.Read(s)
	h := s[0].Value.Float64Histogram()
	var n uint64
	for i := range h.Counts {
		n += h.Counts[i] - before[i]
	}
	var seen uint64
	for i := range h.Counts {
		if seen += h.Counts[i] - before[i]; 2*seen >= n && n > 0 {
			return time.Duration(h.Buckets[i+1] * float64(time.Second))
		}
	}
	return 0
}
