package fanin

import (
	"context"
	"iter"
	"sync"
)

// readAhead is how many items each source of MergeSeq may have produced that
// the consumer has not taken yet: the bound on its buffer.
const readAhead = 64

// MergeSeq returns a sequence of every item of seqs, in the order they are
// produced.
// Each source runs on a goroutine of its own.
// It reads up to 64 items ahead of the consumer, so a slow source does not
// hold up the others.
// The consumer takes what a source has buffered in one step.
//
// An error a source yields comes out as a *SourceError naming the source.
// When ctx ends, the sequence yields ctx.Err() and stops.
// Nil sequences are skipped.
//
// When the loop over the result ends, early or not, every source is told to
// stop: its yield returns false.
// The loop then waits for all sources to return, so no goroutine outlives
// it.
// A source that blocks between items (a network stream, say) must end when
// its own context does.
// Cancel that context before breaking out of the loop.
// Otherwise the break waits for the source's next item.
func MergeSeq[T any](ctx context.Context, seqs ...iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var sources []*source[T]
		for i, seq := range seqs {
			if seq != nil {
				sources = append(sources, &source[T]{index: i, space: make(chan struct{}, 1)})
			}
		}
		if len(sources) == 0 {
			return
		}
		stop := make(chan struct{})
		ready := make(chan *source[T], len(sources))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer close(stop)
		for _, s := range sources {
			wg.Go(func() { s.run(seqs[s.index], ready, stop) })
		}
		done := ctx.Done()
		for running := len(sources); running > 0; {
			var s *source[T]
			select {
			case s = <-ready:
			case <-done:
				var zero T
				yield(zero, ctx.Err())
				return
			}
			batch, finished := s.take()
			for i := range batch {
				e := &batch[i]
				if !yield(e.v, sourceError(s.index, e.err)) {
					return
				}
			}
			s.giveBack(batch)
			if finished {
				running--
			}
		}
	}
}

// entry is one item or error of a source, as read ahead of the consumer.
type entry[T any] struct {
	v   T
	err error
}

// source is one sequence of MergeSeq, read by its own goroutine into a
// buffer the consumer swaps out whole.
type source[T any] struct {
	index int
	space chan struct{} // the consumer made room for a waiting producer

	mu       sync.Mutex
	items    []entry[T] // produced, not yet taken
	spare    []entry[T] // the consumer's last batch, emptied, for reuse
	queued   bool       // on the ready channel, and not taken since
	waiting  bool       // the producer waits for space
	finished bool       // the sequence has returned
}

func (s *source[T]) run(seq iter.Seq2[T, error], ready chan<- *source[T], stop <-chan struct{}) {
	defer s.finish(ready)
	for v, err := range seq {
		if !s.put(entry[T]{v, err}, ready, stop) {
			return
		}
	}
}

// put adds an item to the buffer, waiting while it is full, and queues the
// source for the consumer if it is not queued already. It returns false when
// the merge has stopped.
func (s *source[T]) put(e entry[T], ready chan<- *source[T], stop <-chan struct{}) bool {
	s.mu.Lock()
	for len(s.items) >= readAhead {
		s.waiting = true
		s.mu.Unlock()
		select {
		case <-s.space:
		case <-stop:
			return false
		}
		s.mu.Lock()
	}
	s.items = append(s.items, e)
	s.notify(ready)
	return true
}

func (s *source[T]) finish(ready chan<- *source[T]) {
	s.mu.Lock()
	s.finished = true
	s.notify(ready)
}

// notify queues the source unless it is queued, and unlocks s.mu. The ready
// channel holds every source, so the send never blocks.
func (s *source[T]) notify(ready chan<- *source[T]) {
	queue := !s.queued
	s.queued = true
	s.mu.Unlock()
	if queue {
		ready <- s
	}
}

// take hands the consumer everything buffered, and whether the sequence has
// returned after it.
func (s *source[T]) take() ([]entry[T], bool) {
	s.mu.Lock()
	batch := s.items
	s.items, s.spare = s.spare, nil
	s.queued = false
	finished := s.finished
	wake := s.waiting
	s.waiting = false
	s.mu.Unlock()
	if wake {
		s.space <- struct{}{}
	}
	return batch, finished
}

// giveBack returns a consumed batch for the producer to fill again, cleared
// so it keeps nothing alive.
func (s *source[T]) giveBack(batch []entry[T]) {
	clear(batch)
	s.mu.Lock()
	if s.spare == nil {
		s.spare = batch[:0]
	}
	s.mu.Unlock()
}
