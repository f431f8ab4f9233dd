package shm

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestWorkersKeepFewIdle: a burst of blocked calls gets a worker each;
// once they return, at most maxIdleWorkers stay, the next calls reuse
// them, and all end once stop closes.
func TestWorkersKeepFewIdle(t *testing.T) {
	stop := make(chan struct{})
	w := newWorkers(stop)
	release := make(chan struct{})
	var started, ran sync.WaitGroup
	const burst = 4 * maxIdleWorkers
	started.Add(burst)
	ran.Add(burst)
	for range burst {
		w.run(func() {
			started.Done()
			<-release
			ran.Done()
		})
	}
	started.Wait() // every call runs at once: none waited for another
	close(release)
	ran.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for w.idle.Load() != maxIdleWorkers && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := w.idle.Load(); n != maxIdleWorkers {
		t.Fatalf("%d idle workers after a burst of %d calls, want %d", n, burst, maxIdleWorkers)
	}
	// As many calls again as wait idle: they go to the idle workers (a
	// worker counted idle may not wait yet: a few may get new ones).
	time.Sleep(10 * time.Millisecond)
	before := runtime.NumGoroutine()
	hold := make(chan struct{})
	started.Add(maxIdleWorkers)
	for range maxIdleWorkers {
		w.run(func() {
			started.Done()
			<-hold
		})
	}
	started.Wait()
	if n := runtime.NumGoroutine() - before; n >= maxIdleWorkers/2 {
		t.Fatalf("%d more goroutines for %d calls with as many workers idle: the calls did not reuse them", n, maxIdleWorkers)
	}
	close(hold)
	close(stop)
	w.wait()
}
