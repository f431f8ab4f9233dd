package fanin

import "iter"

// MergeSorted merges sequences that are each sorted by cmp into one sorted
// sequence, keeping equal items in the order of their sources (the merge is
// stable). It pulls each source in batches, which grow from 1 to 128 items,
// so the cost of switching to a source is spread over many items, and picks
// the next item with a loser tree: one comparison per level of a tree over
// the sources.
//
// An error a source yields comes out as a *SourceError naming the source, as
// soon as the merge reaches it in that source; the source's later items are
// merged as before. Nil sequences are skipped. The sources run on the
// consumer's goroutine, one batch at a time; when the loop over the result
// ends, early or not, every source is stopped.
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
			if !t.cursors[i].advance(yield) {
				return
			}
		}
		t.build()
		for {
			w := t.winner()
			c := &t.cursors[w]
			if c.done {
				return
			}
			if !yield(c.head, nil) || !c.advance(yield) {
				return
			}
			t.replay(w)
		}
	}
}

const maxBatch = 128

// cursor reads one source of MergeSorted a batch at a time.
type cursor[T any] struct {
	source int
	head   T    // the next item, unless done
	done   bool // the source has no more items
	batch  []entry[T]
	pos    int
	next   func() ([]entry[T], bool)
	end    func()
}

// advance moves to the source's next item, yielding the errors it meets on
// the way. It returns false when yield did.
func (c *cursor[T]) advance(yield func(T, error) bool) bool {
	for {
		if c.pos == len(c.batch) {
			var ok bool
			c.batch, ok = c.next()
			c.pos = 0
			if !ok {
				var zero T
				c.head, c.done, c.batch = zero, true, nil
				return true
			}
		}
		e := &c.batch[c.pos]
		c.pos++
		if e.err != nil {
			var zero T
			if !yield(zero, e.from(c.source)) {
				return false
			}
			continue
		}
		c.head = e.v
		return true
	}
}

// batches turns a sequence into one of batches whose size doubles up to
// maxBatch. A batch is valid until the next is asked for: its array is
// reused.
func batches[T any](seq iter.Seq2[T, error]) iter.Seq[[]entry[T]] {
	return func(yield func([]entry[T]) bool) {
		size := 1
		buf := make([]entry[T], 0, maxBatch)
		for v, err := range seq {
			buf = append(buf, entry[T]{v, err})
			if len(buf) < size {
				continue
			}
			if !yield(buf) {
				return
			}
			clear(buf)
			buf = buf[:0]
			size = min(2*size, maxBatch)
		}
		if len(buf) > 0 {
			yield(buf)
		}
	}
}
