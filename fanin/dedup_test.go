package fanin_test

import (
	"errors"
	"iter"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/fanin"
)

func sameKey(a, b item) bool { return a.key == b.key }

func dedupKeys(t *testing.T, seq iter.Seq2[item, error], merge func(kept, next item) item) (got []item, errs []error) {
	t.Helper()
	for it, err := range fanin.Dedup(seq, sameKey, merge) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, it)
	}
	return got, errs
}

func TestDedupKeepsTheFirstOfEachRun(t *testing.T) {
	var tr tracked
	got, errs := dedupKeys(t, tr.seq(0, []int{1, 1, 2, 3, 3, 3, 1, 4}, nil), nil)
	want := []item{{0, 0, 1}, {0, 2, 2}, {0, 3, 3}, {0, 6, 1}, {0, 7, 4}}
	if !slices.Equal(got, want) || errs != nil {
		t.Fatalf("got %v %v, want %v", got, errs, want)
	}
}

func TestDedupMergesEachRun(t *testing.T) {
	var tr tracked
	// The merge hook adds one to pos for each item folded into the first.
	merge := func(kept, next item) item {
		if next.key != kept.key {
			t.Errorf("merge called with keys %d and %d", kept.key, next.key)
		}
		kept.pos++
		return kept
	}
	got, _ := dedupKeys(t, tr.seq(0, []int{5, 5, 5, 6, 7, 7}, nil), merge)
	want := []item{{0, 0 + 2, 5}, {0, 3, 6}, {0, 4 + 1, 7}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestDedupEmptyAndSingle(t *testing.T) {
	var tr tracked
	if got, _ := dedupKeys(t, tr.seq(0, nil, nil), nil); got != nil {
		t.Fatalf("empty: got %v", got)
	}
	if got, _ := dedupKeys(t, tr.seq(0, []int{9}, nil), nil); !slices.Equal(got, []item{{0, 0, 9}}) {
		t.Fatalf("single: got %v", got)
	}
}

// Errors pass through where they come without splitting the run around
// them.
func TestDedupPassesErrorsThrough(t *testing.T) {
	seq := func(yield func(item, error) bool) {
		_ = yield(item{0, 0, 1}, nil) &&
			yield(item{}, errBroken) &&
			yield(item{0, 1, 1}, nil) &&
			yield(item{0, 2, 2}, nil)
	}
	var got []string
	for it, err := range fanin.Dedup(seq, sameKey, nil) {
		if err != nil {
			if !errors.Is(err, errBroken) {
				t.Fatalf("error %v", err)
			}
			got = append(got, "error")
			continue
		}
		got = append(got, string(rune('0'+it.key)))
	}
	if want := []string{"error", "1", "2"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestDedupBreakStopsTheSource(t *testing.T) {
	var tr tracked
	for range fanin.Dedup(tr.endlessSeq(0), sameKey, nil) {
		break
	}
	if tr.returned.Load() != 1 {
		t.Fatal("the source did not return")
	}
}

// Dedup after MergeSorted: one copy of each item that several replicas
// hold, the one from the lowest source.
func TestDedupAfterMergeSorted(t *testing.T) {
	var tr tracked
	merged := fanin.MergeSorted(byKey,
		tr.seq(0, []int{1, 2, 4}, nil),
		tr.seq(1, []int{1, 3, 4}, nil),
		tr.seq(2, []int{2, 4, 5}, nil))
	got, _ := dedupKeys(t, merged, nil)
	want := []item{{0, 0, 1}, {0, 1, 2}, {1, 1, 3}, {0, 2, 4}, {2, 2, 5}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
