package fanin_test

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/fanin"
)

func TestMergeSeqDeliversEveryItemInSourceOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sources, n int
	}{
		{"one source", 1, 1000},
		{"few", 3, 500},
		{"many", 200, 50},
		{"empty sources", 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr tracked
			seqs := make([]iter.Seq2[item, error], tc.sources)
			for i := range seqs {
				seqs[i] = tr.seq(i, make([]int, tc.n), nil)
			}
			next := make([]int, tc.sources)
			got := 0
			for it, err := range fanin.MergeSeq(t.Context(), seqs...) {
				if err != nil {
					t.Fatal(err)
				}
				if it.pos != next[it.source] {
					t.Fatalf("source %d: got item %d, want %d", it.source, it.pos, next[it.source])
				}
				next[it.source]++
				got++
			}
			if got != tc.sources*tc.n {
				t.Fatalf("got %d items, want %d", got, tc.sources*tc.n)
			}
			if r := tr.returned.Load(); r != int32(tc.sources) {
				t.Fatalf("%d of %d sources returned", r, tc.sources)
			}
		})
	}
}

func TestMergeSeqNoSources(t *testing.T) {
	for _, seqs := range [][]iter.Seq2[item, error]{nil, {nil, nil}} {
		for it, err := range fanin.MergeSeq(t.Context(), seqs...) {
			t.Fatalf("got %v, %v from %d nil sources", it, err, len(seqs))
		}
	}
}

func TestMergeSeqSkipsNilSources(t *testing.T) {
	var tr tracked
	seqs := []iter.Seq2[item, error]{nil, tr.seq(1, []int{0, 0}, nil), nil}
	n := 0
	for it, err := range fanin.MergeSeq(t.Context(), seqs...) {
		if err != nil || it.source != 1 {
			t.Fatalf("got %v, %v", it, err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("got %d items, want 2", n)
	}
}

// A source's error names the source; a loop that goes on gets every other
// item, one that breaks stops every source.
func TestMergeSeqErrors(t *testing.T) {
	sources := func(tr *tracked) []iter.Seq2[item, error] {
		return []iter.Seq2[item, error]{
			tr.seq(0, make([]int, 100), nil),
			tr.seq(1, make([]int, 3), errBroken),
			tr.seq(2, make([]int, 100), nil),
		}
	}
	t.Run("continue", func(t *testing.T) {
		var tr tracked
		items, errs := 0, 0
		for _, err := range fanin.MergeSeq(t.Context(), sources(&tr)...) {
			if err == nil {
				items++
				continue
			}
			errs++
			var se *fanin.SourceError
			if !errors.As(err, &se) || se.Source != 1 || !errors.Is(err, errBroken) {
				t.Fatalf("error %v: want a SourceError for source 1 wrapping %v", err, errBroken)
			}
			if want := "fanin: source 1: broken"; err.Error() != want {
				t.Fatalf("error %q, want %q", err, want)
			}
		}
		if items != 203 || errs != 1 {
			t.Fatalf("got %d items and %d errors, want 203 and 1", items, errs)
		}
	})
	t.Run("stop", func(t *testing.T) {
		var tr tracked
		for _, err := range fanin.MergeSeq(t.Context(), append(sources(&tr), tr.endlessSeq(3))...) {
			if err != nil {
				break
			}
		}
		if s, r := tr.started.Load(), tr.returned.Load(); s != 4 || r != 4 {
			t.Fatalf("after the loop, %d sources started and %d returned, want 4 and 4", s, r)
		}
	})
}

// Breaking out of the loop stops every source before the loop ends, whether
// it waits for room in its buffer or is about to yield.
func TestMergeSeqBreakStopsEverySource(t *testing.T) {
	for _, sources := range []int{1, 2, 50} {
		var tr tracked
		seqs := make([]iter.Seq2[item, error], sources)
		for i := range seqs {
			seqs[i] = tr.endlessSeq(i)
		}
		n := 0
		for range fanin.MergeSeq(t.Context(), seqs...) {
			if n++; n == 1000 {
				break
			}
		}
		if r := tr.returned.Load(); r != int32(sources) {
			t.Fatalf("sources=%d: %d returned by the end of the loop", sources, r)
		}
	}
}

// Cancelling the sources' context before breaking ends sources that block
// between items, as the doc comment says to.
func TestMergeSeqCancelThenBreak(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var tr tracked
	seqs := []iter.Seq2[item, error]{tr.blocking(ctx, 0), tr.blocking(ctx, 1)}
	n := 0
	for it, err := range fanin.MergeSeq(ctx, seqs...) {
		if err != nil {
			t.Fatalf("error before the cancel: %v", err)
		}
		if it.pos != 0 {
			t.Fatalf("got %v", it)
		}
		if n++; n == 2 {
			cancel()
			break
		}
	}
	if r := tr.returned.Load(); r != 2 {
		t.Fatalf("%d of 2 sources returned", r)
	}
}

// When ctx ends, the merge yields ctx's error and stops, even if the
// sources have not noticed.
func TestMergeSeqContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	var tr tracked
	slow := func(yield func(item, error) bool) {
		tr.started.Add(1)
		defer tr.returned.Add(1)
		for pos := 0; ; pos++ {
			time.Sleep(time.Millisecond)
			if !yield(item{0, pos, 0}, nil) {
				return
			}
		}
	}
	var last error
	items := 0
	for _, err := range fanin.MergeSeq(ctx, slow) {
		if err != nil {
			last = err
			continue
		}
		items++
	}
	if !errors.Is(last, context.DeadlineExceeded) {
		t.Fatalf("last error %v, want %v", last, context.DeadlineExceeded)
	}
	if items == 0 {
		t.Fatal("no items before the deadline")
	}
	if r := tr.returned.Load(); r != 1 {
		t.Fatal("the source had not returned by the end of the loop")
	}
}

// A source runs ahead of a consumer that stops taking by at most its buffer
// and the batch the consumer holds.
func TestMergeSeqReadAheadIsBounded(t *testing.T) {
	var produced atomic.Int64
	counting := func(yield func(item, error) bool) {
		for pos := 0; ; pos++ {
			produced.Add(1)
			if !yield(item{0, pos, 0}, nil) {
				return
			}
		}
	}
	for range fanin.MergeSeq(t.Context(), counting) {
		time.Sleep(50 * time.Millisecond)
		break
	}
	// One buffer of 64 filled, one more item waiting for room, and the
	// batch the consumer took (at most 64).
	if n := produced.Load(); n > 2*64+1 {
		t.Fatalf("the source produced %d items while the consumer held 1", n)
	}
}
