package handover

import (
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"

	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"
)

// TestShallowPlan checks that a shallow copy copies every field but the
// message's state and size cache, for a generated message (one move of
// the contiguous fields), for the layout of old generated code (the size
// cache last) and for a size cache between fields (field by field).
func TestShallowPlan(t *testing.T) {
	t.Run("layout=generated", func(t *testing.T) {
		src := &testgrpc.SimpleRequest{ResponseSize: 7, Payload: &testgrpc.Payload{Body: []byte("b")}, FillUsername: true}
		proto.Size(src) // sets src's size cache
		dst := &testgrpc.SimpleRequest{}
		if p := shallowPlanFor(reflect.TypeOf(dst).Elem()); p.moves == nil {
			t.Fatal("a generated message is copied through reflection")
		}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("shallowCopy refused two messages of one type")
		}
		if dst.ResponseSize != 7 || dst.Payload != src.Payload || !dst.FillUsername {
			t.Errorf("copied %v, want the fields of %v", dst, src)
		}
		if v := reflect.ValueOf(dst).Elem().FieldByName("sizeCache"); v.Int() != 0 {
			t.Errorf("the size cache was copied (%d)", v.Int())
		}
	})
	type old struct {
		A                    string
		B                    []int
		XXX_NoUnkeyedLiteral struct{}
		XXX_unrecognized     []byte
		XXX_sizecache        int32
	}
	t.Run("layout=old", func(t *testing.T) {
		src, dst := &old{A: "a", B: []int{1}, XXX_unrecognized: []byte{1}, XXX_sizecache: 9}, &old{}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		if dst.A != "a" || len(dst.B) != 1 || len(dst.XXX_unrecognized) != 1 || dst.XXX_sizecache != 0 {
			t.Errorf("copied %+v from %+v, want all but the size cache", dst, src)
		}
	})
	// The layout of gogo's code without unrecognized fields: the last field
	// copied has size zero and shares its offset with the size cache.
	type zeroLast struct {
		Name                 string
		Tags                 []string
		XXX_NoUnkeyedLiteral struct{}
		XXX_sizecache        int32
	}
	t.Run("layout=zero-size-last", func(t *testing.T) {
		src, dst := &zeroLast{Name: "n", Tags: []string{"t"}, XXX_sizecache: 99}, &zeroLast{XXX_sizecache: 7}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		if dst.Name != "n" || len(dst.Tags) != 1 || dst.XXX_sizecache != 0 {
			t.Errorf("copied %+v from %+v, want all but the size cache, and that cleared", dst, src)
		}
	})
	type between struct {
		A         string
		sizeCache int32
		B         *int
	}
	t.Run("layout=cache-between", func(t *testing.T) {
		n := 3
		src, dst := &between{A: "a", sizeCache: 5, B: &n}, &between{}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		if dst.A != "a" || dst.B != &n || dst.sizeCache != 0 {
			t.Errorf("copied %+v from %+v, want all but the size cache", dst, src)
		}
	})
}

// TestShallowPlanKinds copies a struct holding every kind of field, at
// the offsets its alignment gives, and one whose long array leaves the
// copy to reflection; every field arrives but the size cache.
func TestShallowPlanKinds(t *testing.T) {
	type inner struct {
		P *int
		B byte
		S string
	}
	type kinds struct {
		Bool       bool
		I8         int8
		I16        int16
		C64Odd     complex64 // at an offset that is not a multiple of 8
		I32        int32
		F32        float32
		F64        float64
		C64        complex64
		C128       complex128
		Bytes3     [3]byte
		Ints5      [5]int32
		Ptrs       [2]*int
		Map        map[string]int
		Chan       chan int
		Func       func() int
		Iface      any
		Unsafe     unsafe.Pointer
		Inner      inner
		Empty      struct{}
		Slice      []string
		sizeCache  int32
		unknown    []byte
		Last       uint16
		LastBytes  [7]byte
		LastInt8   int8
		Trailing32 uint32
	}
	one, two := 1, 2
	src := &kinds{
		Bool: true, I8: -8, I16: -16, C64Odd: 5 + 6i, I32: -32, F32: 3.5, F64: 6.25, C64: 1 + 2i, C128: 3 + 4i,
		Bytes3: [3]byte{1, 2, 3}, Ints5: [5]int32{5, 4, 3, 2, 1}, Ptrs: [2]*int{&one, &two},
		Map: map[string]int{"a": 1}, Chan: make(chan int), Func: func() int { return 7 }, Iface: &two,
		Unsafe: unsafe.Pointer(&one), Inner: inner{P: &two, B: 9, S: "inner"}, Slice: []string{"x"},
		sizeCache: 77, unknown: []byte{1}, Last: 65535, LastBytes: [7]byte{7, 6, 5, 4, 3, 2, 1}, LastInt8: -1, Trailing32: 0xdeadbeef,
	}
	p := shallowPlanFor(reflect.TypeOf(src).Elem())
	if p.moves == nil {
		t.Fatal("a struct of every kind is copied through reflection")
	}
	dst := &kinds{sizeCache: 5}
	if !shallowCopy(dst, src, nil) {
		t.Fatal("refused")
	}
	if dst.Func == nil || dst.Func() != 7 || dst.Chan != src.Chan || dst.sizeCache != 0 {
		t.Errorf("func set %t, chan %v, size cache %d", dst.Func != nil, dst.Chan, dst.sizeCache)
	}
	want := *src
	want.Func, want.sizeCache, dst.Func = nil, 0, nil
	if !reflect.DeepEqual(*dst, want) {
		t.Errorf("copied\n%+v\nwant\n%+v", *dst, want)
	}

	type long struct {
		Ptrs      [1000]*int
		sizeCache int32
	}
	lsrc, ldst := &long{sizeCache: 3}, &long{}
	lsrc.Ptrs[999] = &one
	if p := shallowPlanFor(reflect.TypeOf(lsrc).Elem()); p.moves != nil {
		t.Fatalf("a long array of pointers took %d moves", len(p.moves))
	}
	if !shallowCopy(ldst, lsrc, nil) || ldst.Ptrs[999] != &one || ldst.sizeCache != 0 {
		t.Errorf("the reflection copy gave %v, size cache %d", ldst.Ptrs[999], ldst.sizeCache)
	}
}

// TestShallowCopyUnderGC copies messages whose fields are the only
// references to fresh memory while the collector runs: were a pointer
// moved without its write barrier, what it points to could be freed and
// reused, and the strings would change.
func TestShallowCopyUnderGC(t *testing.T) {
	stop := meanwhile(runtime.GC)
	defer stop()
	kept := make([]*testgrpc.Payload, 0, 20000)
	for i := range cap(kept) {
		src := &testgrpc.Payload{Body: []byte(strconv.Itoa(i))}
		dst := &testgrpc.Payload{}
		if !shallowCopy(dst, src, nil) {
			t.Fatal("refused")
		}
		kept = append(kept, dst)
		_ = make([]byte, 64) // garbage, so that freed memory is reused
	}
	runtime.GC()
	for i, m := range kept {
		if string(m.Body) != strconv.Itoa(i) {
			t.Fatalf("message %d holds %q", i, m.Body)
		}
	}
}

// TestReceiveDynamicIsItsOwn checks that a dynamic message, whose one Go
// type holds every message and keeps its fields in maps, is received as
// a message of its own: a top-level copy would share the sender's maps,
// so that the receiver setting a field would change the sender's message.
func TestReceiveDynamicIsItsOwn(t *testing.T) {
	src := dynamicEcho(t, "sender's")
	dst := src.ProtoReflect().New().Interface()
	if err := (&Direction{Slot: new(Slot)}).Receive(dst, src); err != nil {
		t.Fatal(err)
	}
	fd := dst.ProtoReflect().Descriptor().Fields().ByName("text")
	if got := dst.ProtoReflect().Get(fd).String(); got != "sender's" {
		t.Fatalf("received %q", got)
	}
	dst.ProtoReflect().Set(fd, protoreflectString("receiver's"))
	if got := src.ProtoReflect().Get(fd).String(); got != "sender's" {
		t.Errorf("the receiver's change reached the sender's message: %q", got)
	}
}

// TestPlansSwitchWhileCopying copies between messages of two types while
// another goroutine keeps storing one type's plans, then the other's, in
// the slot both use, as senders of two types on one method do: a copy
// must match the second message against the plans it found for the
// first, never against plans loaded again, which may be the other type's.
func TestPlansSwitchWhileCopying(t *testing.T) {
	var last atomic.Pointer[strategy]
	list, echo := &listv1.ListResponse{Strings: []string{"a"}}, &echov1.EchoRequest{Text: "kept"}
	stop := meanwhile(func() {
		for _, m := range []proto.Message{list, echo} {
			if _, err := measure(m, &last); err != nil {
				t.Error(err)
			}
		}
	})
	defer stop()
	for range 200000 {
		dst := &echov1.EchoRequest{Text: "kept"}
		if shallowCopy(dst, list, &last) || copyKnown(dst, list, &last) {
			t.Fatal("a list was copied into an echo request")
		}
		if dst.Text != "kept" {
			t.Fatalf("the echo request became %v", dst)
		}
	}
}

// TestIsGenerated checks that only a generated struct counts as one, not
// a struct that embeds a generated message and so has its state field by
// promotion: copying such a struct's top level would share the message it
// embeds, so it is copied as a message instead.
func TestIsGenerated(t *testing.T) {
	type embeds struct{ *echov1.EchoRequest }
	if !isGenerated(reflect.TypeFor[echov1.EchoRequest]()) {
		t.Error("a generated struct does not count")
	}
	if isGenerated(reflect.TypeFor[embeds]()) {
		t.Error("a struct embedding a generated message counts as generated")
	}
	if !shallowPlanFor(reflect.TypeFor[embeds]()).dynamic {
		t.Error("a struct embedding a generated message gets a top-level copy")
	}
}

// meanwhile calls f over and over on a goroutine of its own until the
// function it returns is called, which waits for that goroutine's end.
func meanwhile(f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				f()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
