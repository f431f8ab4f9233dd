package goroutine

import (
	"sync"
	"testing"
)

// TestCurrentTellsGoroutinesApart checks that Current is stable within a
// goroutine and differs between goroutines alive at once.
func TestCurrentTellsGoroutinesApart(t *testing.T) {
	const n = 64
	ids := make([]uintptr, n)
	var started, done sync.WaitGroup
	started.Add(n)
	release := make(chan struct{})
	for i := range n {
		done.Go(func() {
			ids[i] = Current()
			started.Done()
			<-release // all stay alive until every one has its identity
			if again := Current(); again != ids[i] {
				t.Errorf("goroutine %d: Current changed from %#x to %#x", i, ids[i], again)
			}
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	seen := map[uintptr]bool{Current(): true}
	for i, id := range ids {
		if id == 0 || seen[id] {
			t.Fatalf("goroutine %d has identity %#x, which is zero or another live goroutine's", i, id)
		}
		seen[id] = true
	}
}

func BenchmarkCurrent(b *testing.B) {
	for b.Loop() {
		_ = Current()
	}
}
