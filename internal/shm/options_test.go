package shm

import (
	"runtime"
	"testing"
)

// TestSpinNeverAtTwoProcessors: spinning applies only above two
// processors, where it cannot starve the goroutine it waits for.
func TestSpinNeverAtTwoProcessors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, want := range map[int]int{1: 0, 2: 0, 3: 500, 16: 500} {
		runtime.GOMAXPROCS(procs)
		if got := (Options{Spin: 500}).spin(); got != want {
			t.Errorf("GOMAXPROCS %d: spin %d, want %d", procs, got, want)
		}
	}
	runtime.GOMAXPROCS(4)
	if got := (Options{Spin: -1}).spin(); got != 0 {
		t.Errorf("a negative spin: %d, want 0", got)
	}
}
