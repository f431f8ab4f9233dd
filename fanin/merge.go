package fanin

import (
	"context"
	"runtime"
	"sync/atomic"
)

// Merge returns a channel that delivers every value received from ins, in the
// order they arrive.
// The channel closes when every input is closed or ctx ends.
// By then every goroutine Merge started has ended.
// Values of one input keep their order.
//
// The output is buffered (64 values), so senders are not held up by a
// consumer that takes a moment.
// When ctx ends:
//   - Values already in the buffer are still delivered before the close.
//   - A value that a goroutine of Merge has received but not yet put in the
//     buffer is dropped.
//   - Inputs are not drained: their senders should watch ctx too.
//
// A nil input is skipped.
// A nil channel never delivers and never closes, so waiting on it would only
// keep the output open until ctx ends.
// With no non-nil inputs, the output is closed at once.
func Merge[T any](ctx context.Context, ins ...<-chan T) <-chan T {
	n := 0
	for _, in := range ins {
		if in != nil {
			n++
		}
	}
	out := make(chan T, outBuffer)
	if n == 0 {
		close(out)
		return out
	}
	m := &merger[T]{done: ctx.Done(), out: out}
	if n <= forwardUpTo {
		m.running.Store(int32(n))
		for _, in := range ins {
			if in != nil {
				go m.forward(in)
			}
		}
		return out
	}
	groups := make([]group[T], (n+groupSize-1)/groupSize)
	n = 0
	for _, in := range ins {
		if in != nil {
			g := &groups[n/groupSize]
			g.ins[g.open] = in
			g.open++
			n++
		}
	}
	if len(groups) == 1 {
		// One watcher sweeps its own group when busy: a sweeper would
		// only add a handoff.
		m.running.Store(1)
		go m.watch(&groups[0])
		return out
	}
	m.busy = make(chan *group[T], len(groups))
	m.running.Store(int32(len(groups)) + 1)
	m.watching.Store(int32(len(groups)))
	for i := range groups {
		g := &groups[i]
		g.back = make(chan struct{}, 1)
		go m.watch(g)
	}
	go m.sweep()
	return out
}

const (
	outBuffer = 64
	// forwardUpTo is how many inputs at most get a goroutine each: at two,
	// that beat a watcher here; at four, the watcher won.
	forwardUpTo = 2
	// idleSweeps is how many sweeps in a row may find a group empty before
	// the sweeper hands it back to its watcher.
	idleSweeps = 2
	// drainLimit bounds how many values one sweep takes from one input, so a
	// fast buffered input cannot starve the others.
	drainLimit = 32
)

type merger[T any] struct {
	done     <-chan struct{}
	out      chan T
	busy     chan *group[T]
	watching atomic.Int32 // watchers still running; the last closes busy
	running  atomic.Int32 // goroutines still running; the last closes out
}

func (m *merger[T]) exit() {
	if m.running.Add(-1) == 0 {
		close(m.out)
	}
}

// forward serves one input alone: for a handful of inputs a goroutine each
// is cheapest, as the fan-in comparison of the x-dvr dev blog
// (https://x-dvr.github.io/dev-blog/posts/compare-fan-in) found.
func (m *merger[T]) forward(in <-chan T) {
	defer m.exit()
	for {
		v, ok, ready := tryRecv(in)
		if ready {
			if m.ended() {
				return
			}
		} else {
			select {
			case v, ok = <-in:
			case <-m.done:
				return
			}
		}
		if !ok || !m.send(v) {
			return
		}
	}
}

// ended reports whether ctx has ended, without blocking.
func (m *merger[T]) ended() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// watch waits on a group's inputs while they are quiet. After a value it
// takes what else the group has ready, as far as the output has room. If the
// group had more ready it is busy, and if the output was full the watcher
// holds a value it could not place: either way it hands the group to the
// sweeper and waits to get it back. A watcher alone (one group, no sweeper)
// sweeps its own group while it is busy, waiting for room in the output.
func (m *merger[T]) watch(g *group[T]) {
	defer m.exit()
	if m.busy != nil {
		defer func() {
			if m.watching.Add(-1) == 0 {
				close(m.busy)
			}
		}()
	}
	for g.open > 0 {
		i, v, ok := g.wait(m.done)
		switch {
		case i < 0:
			return
		case !ok:
			g.drop(i)
			continue
		}
		if m.busy == nil {
			if !m.send(v) {
				return
			}
			got, live := m.take(g, true)
			if !live {
				return
			}
			if got && g.open > 0 && !m.spin(g) {
				return
			}
			continue
		}
		if !m.trySend(v) {
			g.pending, g.held = v, true
		} else {
			got, live := m.take(g, false)
			if !live {
				return
			}
			if !g.held && (!got || g.open == 0) {
				continue
			}
		}
		m.busy <- g
		select {
		case <-g.back:
		case <-m.done:
			return
		}
	}
}

// sweep takes from every busy group in turn without blocking, yielding the
// processor after each round so the senders it woke can run, and gives each
// group back once it has been empty idleSweeps+1 rounds in a row. With no
// busy group it blocks.
func (m *merger[T]) sweep() {
	defer m.exit()
	var active []*group[T]
	for {
		if len(active) == 0 {
			select {
			case g, ok := <-m.busy:
				if !ok {
					return
				}
				active = append(active, g)
			case <-m.done:
				return
			}
		}
	more:
		for {
			select {
			case g, ok := <-m.busy:
				if !ok {
					break more
				}
				active = append(active, g)
			default:
				break more
			}
		}
		for j := 0; j < len(active); {
			g := active[j]
			busy, live := m.sweepOnce(g)
			if !live {
				return
			}
			if !busy {
				g.back <- struct{}{}
				last := len(active) - 1
				active[j], active[last] = active[last], nil
				active = active[:last]
				continue
			}
			j++
		}
		runtime.Gosched()
	}
}

// spin keeps sweeping a busy group, yielding the processor between sweeps
// so its senders can run, until it is no longer busy. It returns false when
// ctx ended.
func (m *merger[T]) spin(g *group[T]) bool {
	for {
		runtime.Gosched()
		busy, live := m.sweepOnce(g)
		if !live || !busy {
			return live
		}
	}
}

// sweepOnce delivers the value a busy group holds, if any, takes what the
// group has ready and reports whether it is still busy: open, and not found
// empty more than idleSweeps sweeps in a row. It reports false for live when
// ctx ended.
func (m *merger[T]) sweepOnce(g *group[T]) (busy, live bool) {
	got := g.held
	if g.held {
		var zero T
		v := g.pending
		g.pending, g.held = zero, false
		if !m.send(v) {
			return false, false
		}
	}
	took, live := m.take(g, true)
	if got || took {
		g.idle = 0
	} else {
		g.idle++
	}
	if g.open == 0 || g.idle > idleSweeps {
		g.idle = 0
		return false, live
	}
	return true, live
}

// take receives what the group's inputs have ready without blocking and puts
// it in the output. With wait it waits for room in the output; without, it
// stops at a full output and leaves the value in hand held in the group, for
// the sweeper to deliver, so that only the sweeper (or a watcher alone) waits
// on the output, not every watcher whose group got busy while the consumer
// fell behind. It reports whether it got anything, and false for live when
// ctx ended.
func (m *merger[T]) take(g *group[T], wait bool) (got, live bool) {
	for i, in := range &g.ins {
		if in == nil {
			continue
		}
		for range drainLimit {
			v, ok, ready := tryRecv(in)
			if !ready {
				break
			}
			if !ok {
				g.drop(i)
				break
			}
			switch {
			case wait:
				if !m.send(v) {
					return got, false
				}
			case !m.trySend(v):
				g.pending, g.held = v, true
				return true, !m.ended()
			}
			got = true
		}
	}
	return got, !m.ended()
}

// trySend puts v in the output if there is room, without blocking.
func (m *merger[T]) trySend(v T) bool {
	select {
	case m.out <- v:
		return true
	default:
		return false
	}
}

// send puts v in the output, or returns false if ctx ends first.
func (m *merger[T]) send(v T) bool {
	if m.trySend(v) {
		return true
	}
	select {
	case m.out <- v:
		return true
	case <-m.done:
		return false
	}
}
