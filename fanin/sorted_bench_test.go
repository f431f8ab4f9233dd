package fanin_test

import (
	"cmp"
	"container/heap"
	"fmt"
	"iter"
	"testing"

	"github.com/localgrpc/localgrpc/fanin"
)

// mergeSortedHeap is the usual k-way merge MergeSorted is measured against:
// each source pulled one item at a time with iter.Pull2, and the heads kept
// in a container/heap, ties going to the lower source.
func mergeSortedHeap[T any](compare func(a, b T) int, seqs ...iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		h := &heads[T]{compare: compare}
		defer func() {
			for _, s := range h.stops {
				s()
			}
		}()
		for i, seq := range seqs {
			next, stop := iter.Pull2(seq)
			h.stops = append(h.stops, stop)
			if v, err, ok := next(); ok {
				if err != nil && !yield(v, err) {
					return
				}
				h.items = append(h.items, head[T]{v, i, next})
			}
		}
		heap.Init(h)
		for h.Len() > 0 {
			top := &h.items[0]
			if !yield(top.v, nil) {
				return
			}
			v, err, ok := top.next()
			if !ok {
				heap.Pop(h)
				continue
			}
			if err != nil && !yield(v, err) {
				return
			}
			top.v = v
			heap.Fix(h, 0)
		}
	}
}

type head[T any] struct {
	v      T
	source int
	next   func() (T, error, bool)
}

type heads[T any] struct {
	compare func(a, b T) int
	items   []head[T]
	stops   []func()
}

func (h *heads[T]) Len() int { return len(h.items) }
func (h *heads[T]) Less(i, j int) bool {
	if c := h.compare(h.items[i].v, h.items[j].v); c != 0 {
		return c < 0
	}
	return h.items[i].source < h.items[j].source
}
func (h *heads[T]) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *heads[T]) Push(x any)    { h.items = append(h.items, x.(head[T])) }
func (h *heads[T]) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

func ints(s []int) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		for _, v := range s {
			if !yield(v, nil) {
				return
			}
		}
	}
}

// BenchmarkMergeSorted merges sources of 100 sorted ints each, interleaved
// so that every source takes turns, with MergeSorted and with the
// container/heap merge.
func BenchmarkMergeSorted(b *testing.B) {
	const items = 100
	impls := []struct {
		name  string
		merge func(func(a, b int) int, ...iter.Seq2[int, error]) iter.Seq2[int, error]
	}{
		{"container-heap", mergeSortedHeap[int]},
		{"fanin.MergeSorted", fanin.MergeSorted[int]},
	}
	for _, sources := range []int{10, 100, 1000} {
		data := make([][]int, sources)
		for s := range data {
			for i := range items {
				data[s] = append(data[s], i*sources+s)
			}
		}
		seqs := make([]iter.Seq2[int, error], sources)
		for s := range seqs {
			seqs[s] = ints(data[s])
		}
		for _, impl := range impls {
			b.Run(fmt.Sprintf("sources=%d/impl=%s", sources, impl.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					prev, n := -1, 0
					for v, err := range impl.merge(cmp.Compare[int], seqs...) {
						if err != nil || v < prev {
							b.Fatalf("got %d, %v after %d", v, err, prev)
						}
						prev = v
						n++
					}
					if n != sources*items {
						b.Fatalf("got %d items, want %d", n, sources*items)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sources*items), "ns/item")
			})
		}
	}
}
