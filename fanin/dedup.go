package fanin

import "iter"

// Dedup returns seq with each run of adjacent equal items replaced by one
// item.
// The function equal tells which items are equal.
// The function merge folds a run into its one item.
// It is called with the item so far and the next equal one, in order, and
// returns the new item so far.
// With a nil merge, the first item of each run is kept.
// Put Dedup after MergeSorted to drop the copies that several sources hold
// of one item.
//
// Errors pass through as they come, without ending the run around them.
// Each item is compared with the item before it, not with the merged one.
func Dedup[T any](seq iter.Seq2[T, error], equal func(a, b T) bool, merge func(kept, next T) T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var kept, prev T
		inRun := false
		for v, err := range seq {
			if err != nil {
				var zero T
				if !yield(zero, err) {
					return
				}
				continue
			}
			switch {
			case !inRun:
				kept, inRun = v, true
			case equal(prev, v):
				if merge != nil {
					kept = merge(kept, v)
				}
			default:
				if !yield(kept, nil) {
					return
				}
				kept = v
			}
			prev = v
		}
		if inRun {
			yield(kept, nil)
		}
	}
}
