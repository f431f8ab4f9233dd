package main

import (
	"sync/atomic"
	"testing"
	"time"
)

// The cleanups run once each, a removed one not at all, and a stuck one
// holds the exit no longer than the limit.
func TestForcedExitCleanups(t *testing.T) {
	var c cleanups
	var ran, removed atomic.Int32
	c.add(func() { ran.Add(1) })
	c.add(func() { removed.Add(1) })()
	stuck := make(chan struct{})
	defer close(stuck)
	c.add(func() { <-stuck })
	start := time.Now()
	c.run(100 * time.Millisecond)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %v with a stuck cleanup and a limit of 100ms", took)
	}
	if ran.Load() != 1 || removed.Load() != 0 {
		t.Errorf("ran %d (want 1), removed one ran %d (want 0)", ran.Load(), removed.Load())
	}
}
