package fanin

import "iter"

// loserTree picks the least head among the cursors of MergeSorted. Each
// inner node holds the cursor that lost the match there; node 0 holds the
// overall winner. Cursor i is the leaf at node k+i. A cursor that is done
// loses to any that is not, and equal heads go to the lower index, which
// makes the merge stable. The heads live apart from the cursors so the
// matches read a compact array.
type loserTree[T any] struct {
	cmp     func(a, b T) int
	heads   []T
	done    []bool
	cursors []cursor[T]
	nodes   []int
}

func (t *loserTree[T]) add(source int, seq iter.Seq2[T, error]) {
	next, end := iter.Pull(batches(seq))
	t.cursors = append(t.cursors, cursor[T]{source: source, next: next, end: end})
	var zero T
	t.heads = append(t.heads, zero)
	t.done = append(t.done, false)
}

func (t *loserTree[T]) stop() {
	for i := range t.cursors {
		t.cursors[i].end()
	}
}

// less reports whether cursor a's head comes before cursor b's.
func (t *loserTree[T]) less(a, b int) bool {
	if t.done[a] || t.done[b] {
		return !t.done[a] || (t.done[b] && a < b)
	}
	if c := t.cmp(t.heads[a], t.heads[b]); c != 0 {
		return c < 0
	}
	return a < b
}

func (t *loserTree[T]) build() {
	k := len(t.cursors)
	t.nodes = make([]int, k)
	winners := make([]int, 2*k)
	for i := range k {
		winners[k+i] = i
	}
	for n := k - 1; n >= 1; n-- {
		a, b := winners[2*n], winners[2*n+1]
		if t.less(b, a) {
			a, b = b, a
		}
		winners[n], t.nodes[n] = a, b
	}
	t.nodes[0] = winners[1]
}

// winner is the cursor with the least head.
func (t *loserTree[T]) winner() int { return t.nodes[0] }

// replay restores the tree after cursor w's head changed, playing it
// against the losers on its path to the root.
func (t *loserTree[T]) replay(w int) {
	if t.done[w] {
		// Rare: once per source. The loop below assumes a live w.
		for n := (len(t.cursors) + w) / 2; n >= 1; n /= 2 {
			if o := t.nodes[n]; t.less(o, w) {
				t.nodes[n], w = w, o
			}
		}
		t.nodes[0] = w
		return
	}
	// The hot path: w's head is read once, and a finished loser there
	// always loses to it.
	head := t.heads[w]
	for n := (len(t.cursors) + w) / 2; n >= 1; n /= 2 {
		o := t.nodes[n]
		if t.done[o] {
			continue
		}
		c := t.cmp(t.heads[o], head)
		if c < 0 || (c == 0 && o < w) {
			t.nodes[n], w = w, o
			head = t.heads[w]
		}
	}
	t.nodes[0] = w
}
