package shm

import (
	"sync"
	"sync/atomic"
)

// workers run a connection's calls on goroutines kept between calls. A
// call on a goroutine of its own grows its stack (a codec reaches deep),
// which cost a server a fifth of its time on small unary calls; a
// worker's stack has grown already. As grpc-go's server workers do, a
// worker that ran many calls ends, so that a stack one call grew large is
// not kept for ever; and at most maxIdleWorkers wait between calls.
type workers struct {
	work chan func()
	idle atomic.Int32
	wg   sync.WaitGroup
	stop <-chan struct{} // closed as the connection ends
}

const (
	maxIdleWorkers = 16
	workerCalls    = 1 << 14
)

func newWorkers(stop <-chan struct{}) *workers {
	return &workers{work: make(chan func()), stop: stop}
}

// run runs f on an idle worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.work <- f:
		return
	default:
	}
	w.wg.Add(1)
	go w.loop(f)
}

func (w *workers) loop(f func()) {
	defer w.wg.Done()
	for ran := 1; ; ran++ {
		f()
		if ran >= workerCalls || w.idle.Add(1) > maxIdleWorkers {
			if ran < workerCalls {
				w.idle.Add(-1)
			}
			return
		}
		select {
		case f = <-w.work:
			w.idle.Add(-1)
		case <-w.stop:
			w.idle.Add(-1)
			return
		}
	}
}

// wait waits for every worker to end, once stop closed and no run can
// come.
func (w *workers) wait() { w.wg.Wait() }
