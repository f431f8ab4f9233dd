package handover

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"unsafe"
)

// Odd struct layouts for the moves of shallow.go: every value must arrive,
// only top-level slices are clipped, and every pointer a move stores must
// keep what it points to alive (run with GODEBUG=gccheckmark=1 too).

type layoutInner struct {
	Slice []int // nested: must keep its capacity
	Strs  [2]string
	N     int64
}

type layoutStringer interface{ String() string }

type layoutVal int32

func (v layoutVal) String() string { return strconv.Itoa(int(v)) }

type layoutBig [5]int64

func (v layoutBig) String() string { return fmt.Sprint(v[4]) }

type layouts struct {
	B0         bool
	Strs       [3]string
	B1         bool
	Slices     [2][]byte // an array of slices: not top-level slices
	Inner      layoutInner
	Inners     [2]layoutInner
	U1, U2     uint64 // a pair of words to merge
	P          *int
	U3, U4, U5 uint64 // three words: one merged pair and one left
	Ifaces     [2]any
	Str        layoutStringer
	IVal       any // a non-pointer value
	IStr       any // a string
	IStruct    any // a struct value, boxed
	IBig       layoutStringer
	I16        int16
	C128       complex128
	I8         int8
	C64        complex64
	Top        []string // top level: clipped
	Fn         func() string
	Arr0       [0]*int
	U6         uint64
	Empty      struct{}
	U7         uint64
	Tail       [3]uint8
}

func makeLayouts(i int) *layouts {
	n := i
	s := func(k int) string { return strconv.Itoa(i) + "/" + strconv.Itoa(k) } // on the heap, fresh
	sl := make([]int, 2, 9)
	sl[0], sl[1] = i, -i
	top := make([]string, 2, 7)
	top[0], top[1] = s(20), s(21)
	return &layouts{
		B0: true, Strs: [3]string{s(0), s(1), s(2)}, B1: true,
		Slices: [2][]byte{[]byte(s(3)), append(make([]byte, 0, 40), s(4)...)},
		Inner:  layoutInner{Slice: sl, Strs: [2]string{s(5), s(6)}, N: int64(i)},
		Inners: [2]layoutInner{{Slice: append(make([]int, 0, 5), i), Strs: [2]string{s(7), ""}}, {Strs: [2]string{"", s(8)}}},
		U1:     uint64(i), U2: ^uint64(i), P: &n, U3: 3, U4: 4, U5: 5,
		Ifaces: [2]any{s(9), []string{s(10)}}, Str: layoutVal(i), IVal: i * 1000003, IStr: s(11),
		IStruct: layoutInner{Strs: [2]string{s(12), s(13)}}, IBig: layoutBig{1, 2, 3, 4, int64(i)},
		I16: -16, C128: complex(float64(i), 2), I8: -8, C64: 1 + 2i, Top: top,
		Fn: func() string { return s(14) }, U6: 6, U7: 7, Tail: [3]uint8{1, 2, 3},
	}
}

func checkLayouts(t *testing.T, i int, dst, src *layouts, same bool) {
	t.Helper()
	want := *src
	got := *dst
	if got.Fn == nil || got.Fn() != src.Fn() {
		t.Fatalf("%d: Fn lost", i)
	}
	want.Fn, got.Fn = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%d: copied\n%+v\nwant\n%+v", i, got, want)
	}
	if cap(dst.Top) != len(dst.Top) {
		t.Errorf("%d: the top-level slice kept capacity %d > %d", i, cap(dst.Top), len(dst.Top))
	}
	if cap(dst.Inner.Slice) != cap(src.Inner.Slice) || cap(dst.Slices[1]) != cap(src.Slices[1]) || cap(dst.Inners[0].Slice) != cap(src.Inners[0].Slice) {
		t.Errorf("%d: a slice that is not a top-level field was clipped: caps %d %d %d, want %d %d %d", i,
			cap(dst.Inner.Slice), cap(dst.Slices[1]), cap(dst.Inners[0].Slice), cap(src.Inner.Slice), cap(src.Slices[1]), cap(src.Inners[0].Slice))
	}
	if same && dst.P != src.P || same && unsafe.SliceData(dst.Top) != unsafe.SliceData(src.Top) {
		t.Errorf("%d: a pointer moved elsewhere", i)
	}
}

func TestShallowOddLayouts(t *testing.T) {
	p := shallowPlanFor(reflect.TypeFor[layouts]())
	if p.moves == nil {
		t.Fatal("copied through reflection")
	}
	for _, m := range p.moves {
		if (m.kind == moveClippedSlice || m.kind == moveList) && m.offset != unsafe.Offsetof(layouts{}.Top) {
			t.Errorf("a clipped move at offset %d, which is not the top-level slice", m.offset)
		}
	}
	src := makeLayouts(7)
	dst := &layouts{}
	if !shallowCopy(dst, src, nil) {
		t.Fatal("refused")
	}
	checkLayouts(t, 7, dst, src, true)
	// Into a struct that held other values: every field is overwritten.
	old := makeLayouts(99)
	if !shallowCopy(old, src, nil) {
		t.Fatal("refused")
	}
	checkLayouts(t, 7, old, src, true)
}

// TestShallowOddLayoutsUnderGC copies structs whose every pointer is the
// only reference to fresh memory, while the collector runs, then drops
// the sources and checks every copy once the heap was reused.
func TestShallowOddLayoutsUnderGC(t *testing.T) {
	stop := meanwhile(runtime.GC)
	defer stop()
	const n = 3000
	kept := make([]*layouts, n)
	for i := range n {
		src := makeLayouts(i)
		dst := &layouts{}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		kept[i] = dst
		_ = make([]byte, 256)
	}
	runtime.GC()
	runtime.GC()
	for i, dst := range kept {
		checkLayouts(t, i, dst, makeLayouts(i), false)
	}
}
