package inproc

import "sync/atomic"

// A signal is one event of a call's life that happens at most once: the
// header going out, the status going out, the handler returning, the
// client's side ending. A channel to wait on is made only for whoever
// waits, which most calls never do. It takes no lock and two words: every
// call carries one, and reading it is one atomic load, so guards on hot
// paths may look as often as they like.
type signal struct {
	state atomic.Uint32
	ch    atomic.Pointer[chan struct{}]
}

const (
	signalRaised uint32 = 1 << iota // raise happened
	signalClosed                    // ch is closed
)

// raise raises the signal unless it was raised already, and reports
// whether this call raised it.
func (g *signal) raise() bool {
	if g.state.Or(signalRaised)&signalRaised != 0 {
		return false
	}
	// done may have made ch before the state said raised: close it. If
	// done made it after, done sees raised and closes it.
	g.closeIfMade()
	return true
}

// isRaised reports whether the signal was raised.
func (g *signal) isRaised() bool { return g.state.Load()&signalRaised != 0 }

// done returns a channel closed once the signal is raised.
func (g *signal) done() <-chan struct{} {
	p := g.ch.Load()
	if p == nil {
		c := make(chan struct{})
		if !g.ch.CompareAndSwap(nil, &c) {
			return *g.ch.Load()
		}
		p = &c
	}
	if g.isRaised() {
		g.closeIfMade()
	}
	return *p
}

// closeIfMade closes ch, once, if it was made.
func (g *signal) closeIfMade() {
	if p := g.ch.Load(); p != nil && g.state.Or(signalClosed)&signalClosed == 0 {
		close(*p)
	}
}

// An errSignal is a signal raised with an error: why the call ended, say
// (nil for an end that went well), which every later look reports.
type errSignal struct {
	signal
	claimed atomic.Bool
	err     error
}

// raise raises the signal with err unless it was raised, or is being
// raised, already; it reports whether this call raised it.
func (g *errSignal) raise(err error) bool {
	if g.claimed.Swap(true) {
		return false
	}
	g.err = err
	return g.signal.raise() // after err: whoever sees it raised sees err
}

// cause is the error the signal was raised with; nil until it is claimed.
// A caller that finds it claimed but not yet raised waits on its channel.
// The winner raises it a few instructions after it claims it.
func (g *errSignal) cause() error {
	if !g.claimed.Load() {
		return nil
	}
	if !g.isRaised() {
		<-g.done()
	}
	return g.err
}
