package fanin_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/localgrpc/localgrpc/fanin"
)

// sendTagged returns a channel on which a new goroutine sends source*n to
// source*n+n-1 in order, then closes it.
func sendTagged(source, n, buffer int) <-chan int {
	c := make(chan int, buffer)
	go func() {
		for i := range n {
			c <- source*n + i
		}
		close(c)
	}()
	return c
}

func TestMergeDeliversEveryValueInInputOrder(t *testing.T) {
	for _, tc := range []struct {
		name             string
		sources, n, buff int
	}{
		{"one input", 1, 100, 0},
		{"two inputs", 2, 100, 0},
		{"one group", 4, 50, 0},
		{"groups", 100, 10, 0},
		{"many groups", 1000, 10, 0},
		{"buffered inputs", 50, 500, 64},
		{"empty inputs", 30, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ins := make([]<-chan int, tc.sources)
			for i := range ins {
				ins[i] = sendTagged(i, tc.n, tc.buff)
			}
			next := make([]int, tc.sources) // the next value each source should deliver
			for i := range next {
				next[i] = i * tc.n
			}
			got := 0
			for v := range fanin.Merge(t.Context(), ins...) {
				s := v / tc.n
				if v != next[s] {
					t.Fatalf("source %d delivered %d, want %d next", s, v, next[s])
				}
				next[s]++
				got++
			}
			if want := tc.sources * tc.n; got != want {
				t.Fatalf("got %d values, want %d", got, want)
			}
		})
	}
}

// A consumer that starts late finds the output full and every input ready:
// the goroutines of Merge that cannot put a value in the output hold it for
// the one that waits, and every value still comes out, in input order.
func TestMergeLateConsumer(t *testing.T) {
	for _, sources := range []int{2, 4, 100} {
		const n = 100
		ins := make([]<-chan int, sources)
		for s := range ins {
			c := make(chan int, n)
			for i := range n {
				c <- s*n + i
			}
			close(c)
			ins[s] = c
		}
		out := fanin.Merge(t.Context(), ins...)
		deadline := time.Now().Add(5 * time.Second)
		for len(out) < cap(out) {
			if time.Now().After(deadline) {
				t.Fatalf("sources=%d: the output holds %d values, want %d", sources, len(out), cap(out))
			}
			time.Sleep(time.Millisecond)
		}
		next := make([]int, sources)
		for s := range next {
			next[s] = s * n
		}
		got := 0
		for v := range out {
			s := v / n
			if v != next[s] {
				t.Fatalf("sources=%d: source %d delivered %d, want %d next", sources, s, v, next[s])
			}
			next[s]++
			got++
		}
		if want := sources * n; got != want {
			t.Fatalf("sources=%d: got %d values, want %d", sources, got, want)
		}
	}
}

func TestMergeNoInputs(t *testing.T) {
	for _, ins := range [][]<-chan int{nil, {nil}, {nil, nil, nil}} {
		out := fanin.Merge(t.Context(), ins...)
		select {
		case v, ok := <-out:
			if ok {
				t.Fatalf("Merge of %d nil inputs delivered %d", len(ins), v)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Merge of %d nil inputs: the output is not closed", len(ins))
		}
	}
}

// Nil inputs are skipped: they do not hold the output open.
func TestMergeSkipsNilInputs(t *testing.T) {
	ins := []<-chan int{nil, sendTagged(1, 3, 0), nil, sendTagged(3, 3, 0), nil}
	var got []int
	for v := range fanin.Merge(t.Context(), ins...) {
		got = append(got, v)
	}
	slices.Sort(got)
	if want := []int{3, 4, 5, 9, 10, 11}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Values sent one at a time, each after the last came out, on inputs spread
// over every group: each must come out while the others stay idle.
func TestMergeOneValueAtATime(t *testing.T) {
	for _, sources := range []int{1, 3, 100, 1000} {
		chans := make([]chan int, sources)
		ins := make([]<-chan int, sources)
		for i := range chans {
			chans[i] = make(chan int)
			ins[i] = chans[i]
		}
		out := fanin.Merge(t.Context(), ins...)
		for i := range 3 * sources {
			select {
			case chans[(i*7)%sources] <- i:
			case <-time.After(5 * time.Second):
				t.Fatalf("sources=%d: value %d not taken", sources, i)
			}
			select {
			case v := <-out:
				if v != i {
					t.Fatalf("sources=%d: got %d, want %d", sources, v, i)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("sources=%d: value %d not delivered", sources, i)
			}
		}
		for _, c := range chans {
			close(c)
		}
		if v, ok := <-out; ok {
			t.Fatalf("sources=%d: extra value %d", sources, v)
		}
	}
}

// Ending ctx closes the output (one of the inputs never sends nor closes) and ends every goroutine of Merge, whether
// they wait on quiet inputs or on a consumer that stopped reading.
func TestMergeCancel(t *testing.T) {
	for _, sources := range []int{2, 4, 100, 1000} {
		for _, reading := range []bool{true, false} {
			ctx, cancel := context.WithCancel(t.Context())
			quiet := make(chan int) // never sends, never closes
			ins := []<-chan int{quiet}
			for i := 1; i < sources; i++ {
				ins = append(ins, endless(ctx))
			}
			out := fanin.Merge(ctx, ins...)
			if reading {
				for range 1000 {
					<-out
				}
			} else {
				time.Sleep(10 * time.Millisecond) // let the buffer fill
			}
			cancel()
			deadline := time.After(5 * time.Second)
		drain:
			for {
				select {
				case _, ok := <-out:
					if !ok {
						break drain
					}
				case <-deadline:
					t.Fatalf("sources=%d reading=%v: output not closed after cancel", sources, reading)
				}
			}
			if err := goleak.Find(); err != nil {
				t.Fatalf("sources=%d reading=%v: %v", sources, reading, err)
			}
		}
	}
}

// endless returns a channel that gets values until ctx ends, then closes.
func endless(ctx context.Context) <-chan int {
	c := make(chan int)
	go func() {
		defer close(c)
		for i := 0; ; i++ {
			select {
			case c <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	return c
}

func TestMergeContextAlreadyDone(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	quiet := make(chan int)
	for v := range fanin.Merge(ctx, quiet, quiet) {
		t.Fatalf("got %d from quiet inputs", v)
	}
}
