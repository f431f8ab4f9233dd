package inproc

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSignalRaceRaiseAndDone raises a signal while other goroutines ask
// for its channel: exactly one raise wins, and the channel, whether done
// made it before or after the raise, closes.
func TestSignalRaceRaiseAndDone(t *testing.T) {
	for i := range 4000 {
		raisers := 1 + i%3 // one raise alone, or racing others
		var g signal
		var wins atomic.Int32
		var wg sync.WaitGroup
		var c <-chan struct{}
		wg.Go(func() { c = g.done() })
		for range raisers {
			wg.Go(func() {
				if g.raise() {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if n := wins.Load(); n != 1 {
			t.Fatalf("%d of %d raises won, want 1", n, raisers)
		}
		select {
		case <-c:
		case <-time.After(5 * time.Second):
			t.Fatal("the channel done handed out never closed")
		}
	}
}

// TestErrSignalCause checks that the error of the raise that won is the
// one every caller sees, including those whose raise lost the race.
func TestErrSignalCause(t *testing.T) {
	var g errSignal
	if g.cause() != nil || g.isRaised() {
		t.Fatal("a new errSignal is raised")
	}
	errs := []error{errors.New("a"), errors.New("b"), errors.New("c"), errors.New("d")}
	seen := make([]error, len(errs))
	won := make([]bool, len(errs))
	var wg sync.WaitGroup
	for i, err := range errs {
		wg.Go(func() {
			won[i] = g.raise(err)
			seen[i] = g.cause()
		})
	}
	wg.Wait()
	var winner error
	for i, w := range won {
		if w {
			if winner != nil {
				t.Fatal("two raises won")
			}
			winner = errs[i]
		}
	}
	for i, s := range seen {
		if s != winner {
			t.Errorf("caller %d saw %v, want the winner's %v", i, s, winner)
		}
	}
}

// TestErrSignalCauseWaitsForRaise checks that cause, between a raise's
// claim and its raising, waits for the raise and reports its error.
func TestErrSignalCauseWaitsForRaise(t *testing.T) {
	var g errSignal
	g.claimed.Store(true) // a raise that won the claim and has not raised yet
	got := make(chan error, 1)
	go func() { got <- g.cause() }()
	select {
	case err := <-got:
		t.Fatalf("cause returned %v before the raise", err)
	case <-time.After(50 * time.Millisecond):
	}
	want := errors.New("why")
	g.err = want
	g.signal.raise()
	select {
	case err := <-got:
		if err != want {
			t.Errorf("cause reported %v, want %v", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cause kept waiting after the raise")
	}
}
