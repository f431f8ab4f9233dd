package fanin_test

import (
	"errors"
	"iter"
	"slices"
	"testing"

	"github.com/localgrpc/localgrpc/fanin"
)

// collectSorted runs MergeSorted over sources with the given keys and
// returns the items; it fails the test on any error.
func collectSorted(t testing.TB, keys [][]int) []item {
	t.Helper()
	var tr tracked
	seqs := make([]iter.Seq2[item, error], len(keys))
	for i, k := range keys {
		seqs[i] = tr.seq(i, k, nil)
	}
	var got []item
	for it, err := range fanin.MergeSorted(byKey, seqs...) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, it)
	}
	if s, r := tr.started.Load(), tr.returned.Load(); s != int32(len(keys)) || r != s {
		t.Fatalf("%d sources, %d started, %d returned", len(keys), s, r)
	}
	return got
}

// stableSort is what MergeSorted must produce: the sources concatenated in
// order, then sorted stably by key.
func stableSort(keys [][]int) []item {
	var all []item
	for s, k := range keys {
		for pos, key := range k {
			all = append(all, item{s, pos, key})
		}
	}
	slices.SortStableFunc(all, byKey)
	return all
}

func TestMergeSortedOrderAndStability(t *testing.T) {
	long := make([]int, 1000) // longer than a batch, all equal keys
	ramp := make([]int, 1000)
	for i := range ramp {
		ramp[i] = i / 3
	}
	for _, tc := range []struct {
		name string
		keys [][]int
	}{
		{"no sources", nil},
		{"one source", [][]int{{1, 2, 2, 3}}},
		{"one empty source", [][]int{{}}},
		{"interleaved", [][]int{{1, 4, 7}, {2, 5, 8}, {3, 6, 9}}},
		{"equal keys keep source order", [][]int{{1, 1, 2}, {1, 2, 2}, {0, 1, 1}}},
		{"empty sources among others", [][]int{{}, {5}, {}, {1, 9}, {}}},
		{"uneven lengths", [][]int{{1}, ramp, {0, 400}, long}},
		{"five sources, not a power of two", [][]int{{3, 3}, {1, 3}, {2, 3}, {0, 3}, {3, 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := collectSorted(t, tc.keys), stableSort(tc.keys)
			if !slices.Equal(got, want) {
				t.Fatalf("got  %v\nwant %v", got, want)
			}
		})
	}
}

func TestMergeSortedManySources(t *testing.T) {
	for _, sources := range []int{100, 1000} {
		keys := make([][]int, sources)
		for s := range keys {
			for i := range 20 {
				keys[s] = append(keys[s], (i*sources+s*7)%(3*sources))
			}
			slices.Sort(keys[s])
		}
		if got, want := collectSorted(t, keys), stableSort(keys); !slices.Equal(got, want) {
			t.Fatalf("sources=%d: merge differs from a stable sort", sources)
		}
	}
}

func TestMergeSortedSkipsNilSources(t *testing.T) {
	var tr tracked
	var got []item
	for it, err := range fanin.MergeSorted(byKey, nil, tr.seq(1, []int{2, 4}, nil), nil, tr.seq(3, []int{3}, nil)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, it)
	}
	if want := []item{{1, 0, 2}, {3, 0, 3}, {1, 1, 4}}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A source's error comes out where the merge reaches it, naming the source;
// a loop that goes on gets every item, one that breaks stops every source.
func TestMergeSortedErrors(t *testing.T) {
	sources := func(tr *tracked) []iter.Seq2[item, error] {
		return []iter.Seq2[item, error]{
			tr.seq(0, []int{1, 3, 5, 7}, nil),
			tr.seq(1, []int{2, 4}, errBroken),
			tr.seq(2, []int{6, 8}, nil),
		}
	}
	var tr tracked
	var keys []int
	var errs []error
	for it, err := range fanin.MergeSorted(byKey, sources(&tr)...) {
		if err != nil {
			errs = append(errs, err)
			keys = append(keys, -1)
			continue
		}
		keys = append(keys, it.key)
	}
	if want := []int{1, 2, 3, 4, -1, 5, 6, 7, 8}; !slices.Equal(keys, want) {
		t.Fatalf("got keys %v, want %v (-1 is the error)", keys, want)
	}
	var se *fanin.SourceError
	if len(errs) != 1 || !errors.As(errs[0], &se) || se.Source != 1 || !errors.Is(errs[0], errBroken) {
		t.Fatalf("errors %v: want one SourceError for source 1 wrapping %v", errs, errBroken)
	}

	tr = tracked{}
	n := 0
	for _, err := range fanin.MergeSorted(byKey, append(sources(&tr), tr.endlessSeq(3))...) {
		n++
		if err != nil {
			break
		}
	}
	if s, r := tr.started.Load(), tr.returned.Load(); s != 4 || r != 4 {
		t.Fatalf("after breaking at the error, %d sources started and %d returned, want 4 and 4", s, r)
	}
}

// An error a source yields before its first item comes out before anything.
func TestMergeSortedErrorFirst(t *testing.T) {
	var tr tracked
	failing := func(yield func(item, error) bool) { yield(item{}, errBroken) }
	var first error
	for _, err := range fanin.MergeSorted(byKey, tr.seq(0, []int{1}, nil), failing) {
		first = err
		break
	}
	var se *fanin.SourceError
	if !errors.As(first, &se) || se.Source != 1 {
		t.Fatalf("first result %v, want source 1's error", first)
	}
	if r := tr.returned.Load(); r != 1 {
		t.Fatalf("source 0 did not return")
	}
}

func TestMergeSortedBreakStopsEverySource(t *testing.T) {
	for _, sources := range []int{1, 2, 7, 300} {
		var tr tracked
		seqs := make([]iter.Seq2[item, error], sources)
		for i := range seqs {
			seqs[i] = tr.endlessSeq(i)
		}
		n := 0
		for range fanin.MergeSorted(byKey, seqs...) {
			if n++; n == 5000 {
				break
			}
		}
		if s, r := tr.started.Load(), tr.returned.Load(); s != int32(sources) || r != s {
			t.Fatalf("sources=%d: %d started, %d returned by the end of the loop", sources, s, r)
		}
	}
}

// FuzzMergeSorted checks MergeSorted against a stable sort of the
// concatenated sources. Each byte is a key (mod 16, so keys repeat), and a
// byte of 255 starts the next source.
func FuzzMergeSorted(f *testing.F) {
	f.Add([]byte{1, 2, 3, 255, 1, 2, 255, 0, 2})
	f.Add([]byte{255, 255, 7, 7, 7, 255, 7})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		keys := [][]int{nil}
		for _, b := range data {
			if b == 255 {
				keys = append(keys, nil)
				continue
			}
			last := len(keys) - 1
			keys[last] = append(keys[last], int(b%16))
		}
		for _, k := range keys {
			slices.Sort(k)
		}
		if got, want := collectSorted(t, keys), stableSort(keys); !slices.Equal(got, want) {
			t.Fatalf("keys %v:\ngot  %v\nwant %v", keys, got, want)
		}
	})
}
