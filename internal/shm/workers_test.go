package shm

import (
	"sync"
	"testing"
	"time"
)

// TestWorkersKeepFewIdle: a burst of blocked calls gets a worker each;
// once they return, at most maxIdleWorkers stay, the next call reuses
// one of them, and all end once stop closes.
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
	done := make(chan struct{})
	w.run(func() { close(done) })
	<-done
	for w.idle.Load() != maxIdleWorkers && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := w.idle.Load(); n != maxIdleWorkers {
		t.Fatalf("%d idle workers after one more call, want %d: it did not reuse an idle one", n, maxIdleWorkers)
	}
	close(stop)
	w.wait()
}
