package fanin

import "iter"

// MergeSorted merges sequences that are each sorted by cmp into one sorted
// sequence.
// The merge is stable: equal items keep the order of their sources.
// It pulls each source in batches, which grow from 1 to 64 items.
// So the cost of switching to a source is spread over many items.
// It picks the next item with a loser tree: one comparison per level of a
// tree over the sources.
//
// An error a source yields comes out as a *SourceError naming the source.
// It comes out as soon as the merge reaches it in that source.
// The source's later items are merged as before.
// Nil sequences are skipped.
// The sources run on the consumer's goroutine, one batch at a time, so a
// source is read up to a batch ahead.
// When the loop over the result ends, early or not, every source is stopped.
func MergeSorted[T any](cmp func(a, b T) int, seqs ...iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		t := &loserTree[T]{cmp: cmp}
		defer t.stop()
		for i, seq := range seqs {
			if seq != nil {
				t.add(i, seq)
			}
		}
		if len(t.cursors) == 0 {
			return
		}
		for i := range t.cursors {
			if !t.advance(i, yield) {
				return
			}
		}
		t.build()
		for {
			w := t.winner()
			if t.done[w] {
				return
			}
			if !yield(t.heads[w], nil) || !t.advance(w, yield) {
				return
			}
			t.replay(w)
		}
	}
}

// maxBatch bounds a batch at what a stream's sender has typically buffered
// (inproc buffers 64 messages a stream): a batch that asks for more makes
// the merge wait for the sender mid-batch, message by message, while the
// items already pulled and the other sources wait. Over 16 in-process
// backends a sorted Proxy took 18% (one string a message) to 46% (ten)
// longer with 128 than with 64, and 32 was no faster than 64 (it switches
// coroutines twice as often). Sources that never block lose little at 64:
// a switch per 64 items.
const maxBatch = 64

// batch is a run of a source's items, and the error the source yielded
// after them, if it did.
type batch[T any] struct {
	items []T
	err   error
}

// cursor reads one source of MergeSorted a batch at a time.
type cursor[T any] struct {
	source int
	batch[T]
	pos  int
	next func() (batch[T], bool)
	end  func()
}

// advance moves cursor i to its source's next item, yielding the errors it
// meets on the way. It returns false when yield did.
func (t *loserTree[T]) advance(i int, yield func(T, error) bool) bool {
	c := &t.cursors[i]
	for c.pos == len(c.items) {
		if c.err != nil {
			err := sourceError(c.source, c.err)
			c.err = nil
			var zero T
			if !yield(zero, err) {
				return false
			}
			continue
		}
		var ok bool
		c.batch, ok = c.next()
		c.pos = 0
		if !ok {
			var zero T
			t.heads[i], t.done[i] = zero, true
			return true
		}
	}
	t.heads[i] = c.items[c.pos]
	c.pos++
	return true
}

// batches turns a sequence into one of batches whose size doubles up to
// maxBatch. A batch's items are valid until the next batch is asked for:
// their array is reused.
func batches[T any](seq iter.Seq2[T, error]) iter.Seq[batch[T]] {
	return func(yield func(batch[T]) bool) {
		size := 1
		var buf []T
		for v, err := range seq {
			if err == nil {
				if buf == nil {
					buf = make([]T, 0, size)
				}
				buf = append(buf, v)
				if len(buf) < size {
					continue
				}
			}
			if !yield(batch[T]{buf, err}) {
				return
			}
			if size < maxBatch && err == nil {
				size *= 2
				buf = nil // the next batch gets an array of the new size
			} else {
				clear(buf)
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			yield(batch[T]{buf, nil})
		}
	}
}
