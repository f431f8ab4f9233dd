package fanin_test

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
)

// item is what the test sources yield: the source and the position in it,
// and a key to sort on.
type item struct {
	source, pos, key int
}

// tracked is a test source that counts how many times it has been started
// and how many times it has returned.
type tracked struct {
	started, returned atomic.Int32
}

// seq yields items with keys from keys, and err after them when it is set.
func (tr *tracked) seq(source int, keys []int, err error) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		tr.started.Add(1)
		defer tr.returned.Add(1)
		for pos, k := range keys {
			if !yield(item{source, pos, k}, nil) {
				return
			}
		}
		if err != nil {
			yield(item{}, err)
		}
	}
}

// blocking yields one item, then waits for ctx before it ends with ctx's
// error, as a network stream does.
func (tr *tracked) blocking(ctx context.Context, source int) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		tr.started.Add(1)
		defer tr.returned.Add(1)
		if !yield(item{source, 0, 0}, nil) {
			return
		}
		<-ctx.Done()
		yield(item{}, ctx.Err())
	}
}

// endlessSeq yields items until its yield returns false.
func (tr *tracked) endlessSeq(source int) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		tr.started.Add(1)
		defer tr.returned.Add(1)
		for pos := 0; ; pos++ {
			if !yield(item{source, pos, pos}, nil) {
				return
			}
		}
	}
}

var errBroken = errors.New("broken")

func byKey(a, b item) int { return a.key - b.key }
