package fanin_test

import (
	"context"
	"reflect"
	"sync"
)

// The four ways to merge channels that the fan-in comparison of the x-dvr dev
// blog (https://x-dvr.github.io/dev-blog/posts/compare-fan-in) measures. They
// live here, in the benchmark, as the yardsticks Merge is measured against;
// none of them takes a context, as in the text.

// mergeGoroutinePerInput starts one goroutine per input, each forwarding to
// the output, and closes the output when all of them are done.
func mergeGoroutinePerInput[T any](ins ...<-chan T) <-chan T {
	out := make(chan T)
	var wg sync.WaitGroup
	for _, in := range ins {
		wg.Go(func() {
			for v := range in {
				out <- v
			}
		})
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

// mergeReflectSelect waits on every input at once with reflect.Select from one
// goroutine, dropping each input from the cases when it closes.
func mergeReflectSelect[T any](ins ...<-chan T) <-chan T {
	out := make(chan T)
	cases := make([]reflect.SelectCase, len(ins))
	for i, in := range ins {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(in)}
	}
	go func() {
		defer close(out)
		for len(cases) > 0 {
			i, v, ok := reflect.Select(cases)
			if !ok {
				cases = append(cases[:i], cases[i+1:]...)
				continue
			}
			out <- v.Interface().(T)
		}
	}()
	return out
}

// mergeGroupsOfFour starts one goroutine per group of four inputs, each
// waiting on its group with one select; a closed input's case is disabled by
// setting it to nil.
func mergeGroupsOfFour[T any](ins ...<-chan T) <-chan T {
	out := make(chan T)
	var wg sync.WaitGroup
	for start := 0; start < len(ins); start += 4 {
		var group [4]<-chan T
		copy(group[:], ins[start:])
		wg.Go(func() {
			a, b, c, d := group[0], group[1], group[2], group[3]
			for a != nil || b != nil || c != nil || d != nil {
				select {
				case v, ok := <-a:
					if !ok {
						a = nil
						continue
					}
					out <- v
				case v, ok := <-b:
					if !ok {
						b = nil
						continue
					}
					out <- v
				case v, ok := <-c:
					if !ok {
						c = nil
						continue
					}
					out <- v
				case v, ok := <-d:
					if !ok {
						d = nil
						continue
					}
					out <- v
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}

// mergePollingLoop sweeps every open input with a non-blocking receive from
// one goroutine, over and over, until all are closed. It never blocks on an
// input, so it spins while the inputs are empty.
func mergePollingLoop[T any](ins ...<-chan T) <-chan T {
	out := make(chan T)
	open := append([]<-chan T(nil), ins...)
	go func() {
		defer close(out)
		for len(open) > 0 {
			for i := 0; i < len(open); {
				select {
				case v, ok := <-open[i]:
					if !ok {
						open[i] = open[len(open)-1]
						open = open[:len(open)-1]
						continue
					}
					out <- v
				default:
				}
				i++
			}
		}
	}()
	return out
}

// strategy is one way to merge, under the name the benchmark gives it.
type strategy struct {
	name  string
	merge func(ctx context.Context, ins ...<-chan int) <-chan int
}

func withoutContext(merge func(ins ...<-chan int) <-chan int) func(context.Context, ...<-chan int) <-chan int {
	return func(_ context.Context, ins ...<-chan int) <-chan int { return merge(ins...) }
}
