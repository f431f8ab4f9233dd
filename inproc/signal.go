package inproc

import (
	"sync"
	"sync/atomic"
)

// A signal is one event of a call's life that happens at most once: the
// header going out, the status going out, the handler returning, the
// client's side ending. It keeps the error it was raised with (nil for an
// end that went well), and makes a channel to wait on only for whoever
// waits, which most calls never do. Reading raised is one atomic load, so
// guards on hot paths may look as often as they like.
type signal struct {
	raised atomic.Bool
	mu     sync.Mutex
	err    error
	ch     chan struct{}
}

// raise raises the signal with err unless it was raised already, and
// reports whether this call raised it.
func (g *signal) raise(err error) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.raised.Load() {
		return false
	}
	g.err = err
	g.raised.Store(true) // after err: whoever sees it raised sees err
	if g.ch != nil {
		close(g.ch)
	}
	return true
}

// isRaised reports whether the signal was raised.
func (g *signal) isRaised() bool { return g.raised.Load() }

// cause is the error the signal was raised with; nil until it is.
func (g *signal) cause() error {
	if !g.raised.Load() {
		return nil
	}
	return g.err
}

// done returns a channel closed once the signal is raised.
func (g *signal) done() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
		if g.raised.Load() {
			close(g.ch)
		}
	}
	return g.ch
}
