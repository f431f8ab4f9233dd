package fanin_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/localgrpc/localgrpc/fanin"
)

func ExampleMerge() {
	worker := func(id int) <-chan string {
		c := make(chan string)
		go func() {
			defer close(c)
			for job := range 2 {
				c <- fmt.Sprintf("worker %d: job %d done", id, job)
			}
		}()
		return c
	}
	var results []string
	for r := range fanin.Merge(context.Background(), worker(1), worker(2), worker(3)) {
		results = append(results, r)
	}
	slices.Sort(results) // they arrive in any order
	fmt.Println(strings.Join(results, "\n"))
	// Output:
	// worker 1: job 0 done
	// worker 1: job 1 done
	// worker 2: job 0 done
	// worker 2: job 1 done
	// worker 3: job 0 done
	// worker 3: job 1 done
}

// sorted yields the given series names in order, as one replica's answer.
func sorted(names ...string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, n := range names {
			if !yield(n, nil) {
				return
			}
		}
	}
}

func ExampleMergeSorted() {
	replicas := []iter.Seq2[string, error]{
		sorted("cpu", "disk", "net"),
		sorted("cpu", "mem"),
		sorted("disk", "mem", "net"),
	}
	merged := fanin.MergeSorted(strings.Compare, replicas...)
	for name, err := range fanin.Dedup(merged, func(a, b string) bool { return a == b }, nil) {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Println(name)
	}
	// Output:
	// cpu
	// disk
	// mem
	// net
}

func ExampleMergeSeq() {
	failing := func(yield func(string, error) bool) {
		yield("", fmt.Errorf("connection reset"))
	}
	n := 0
	for _, err := range fanin.MergeSeq(context.Background(), sorted("a", "b"), failing, sorted("c")) {
		if err != nil {
			fmt.Println(err) // going on reads the other sources; break would stop them all
			continue
		}
		n++
	}
	fmt.Println(n, "items")
	// Output:
	// fanin: source 1: connection reset
	// 3 items
}
