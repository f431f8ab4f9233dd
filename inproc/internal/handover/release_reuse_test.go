package handover

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/localgrpc/localgrpc/internal/zoo/flat3"
	"google.golang.org/protobuf/proto"
)

// fillReused makes m the i-th message of sender g, writing into what m
// holds already (its arrays, its nested messages), as a sender that
// reuses one message does.
func fillReused(m *flat3.Flat, g, i int) {
	m.S = fmt.Sprintf("g%d-%d", g, i)
	m.B = append(m.B[:0], byte(g), byte(i), byte(i>>8))
	m.Names = append(m.Names[:0], fmt.Sprint("n", i), fmt.Sprint("g", g))
	if m.Leaf == nil {
		m.Leaf = &flat3.Leaf{}
	}
	m.Leaf.S = fmt.Sprint("leaf", i)
	m.Leaf.B = append(m.Leaf.B[:0], byte(i))
	m.Leaf.Tags = append(m.Leaf.Tags[:0], fmt.Sprint("t", i))
	if len(m.Leaves) == 0 {
		m.Leaves = []*flat3.Leaf{{}, {}}
	}
	for j, l := range m.Leaves {
		l.S = fmt.Sprint("l", i, "-", j)
		l.B = append(l.B[:0], byte(j), byte(i))
	}
	m.I = int32(i)
	if m.Child == nil {
		m.Child = &flat3.Flat{}
	}
	m.Child.Names = append(m.Child.Names[:0], fmt.Sprint("c", i))
	m.Child.B = append(m.Child.B[:0], byte(i), 7)
}

// TestReleaseReusesAndKeepsApart: flat3.Flat is copied by plans
// (flat), so a released copy is reused; every message received stays as
// it was received while senders on one Slot reuse their messages and
// receivers release what they took, from many goroutines at once, and
// while receivers keep and change their own.
func TestReleaseReusesAndKeepsApart(t *testing.T) {
	slot := new(Slot)
	dir := Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: DefaultMaxRecvMsgSize, Spare: new(Spare)}, Slot: slot, Mode: Clone}
	// One message first: the plans are flat, and a released copy comes
	// back for the next message.
	m := &flat3.Flat{}
	fillReused(m, 0, 0)
	v, _, err := dir.Send(m)
	if err != nil {
		t.Fatal(err)
	}
	if tp := slot.last.Load(); tp == nil || tp.sizer == nil {
		t.Fatalf("flat3.Flat's plans are not flat: %+v", tp)
	}
	first := &flat3.Flat{}
	if err := dir.Receive(first, v); err != nil {
		t.Fatal(err)
	}
	want0, _ := proto.Marshal(first)
	dir.Release(v)
	// A spare copy holds on to nothing of the message it carried.
	if c := v.(*flat3.Flat); c.S != "" || c.B != nil || c.Names != nil || c.Leaf != nil || c.Leaves != nil || c.Child != nil {
		t.Fatalf("a spare copy keeps what it carried: %v", c)
	}
	for range 20 { // each message goes into the copy released before it
		fillReused(m, 0, 1)
		v2, _, err := dir.Send(m)
		if err != nil {
			t.Fatal(err)
		}
		if v2 != v {
			t.Fatalf("Send made a new copy with a released one spare")
		}
		r := &flat3.Flat{}
		if err := dir.Receive(r, v2); err != nil {
			t.Fatal(err)
		}
		dir.Release(v2)
		v = v2
	}
	if got, _ := proto.Marshal(first); !bytes.Equal(got, want0) {
		t.Fatalf("the first message received changed: %v", first)
	}
	// A spare of another type is not given to a copy of this one.
	if !dir.Spare.full.Load() {
		t.Fatal("the last copy released is not spare")
	}
	other := &flat3.Leaf{S: "leaf"}
	if got, _, err := dir.Send(other); err != nil || dir.Spare.full.Load() {
		t.Fatalf("a Leaf's copy left the spare Flat: %v, %v", got, err)
	} else if l, ok := got.(*flat3.Leaf); !ok || l.S != "leaf" {
		t.Fatalf("a Leaf's copy is %T %v", got, got)
	}

	const senders, n = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for g := range senders {
		wg.Go(func() {
			dir := Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: DefaultMaxRecvMsgSize, Spare: new(Spare)}, Slot: slot, Mode: Clone}
			m := &flat3.Flat{}
			type keptMsg struct {
				r          *flat3.Flat
				leaf       *flat3.Leaf
				names, tag []string
				b          []byte
				want       []byte
			}
			var kept []keptMsg
			for i := range n {
				fillReused(m, g, i)
				v, _, err := dir.Send(m)
				if err != nil {
					errs <- err
					return
				}
				r := &flat3.Flat{}
				if err := dir.Receive(r, v); err != nil {
					errs <- err
					return
				}
				dir.Release(v)
				if i%3 == 0 { // the receiver changes what it got
					r.B[0] ^= 0xff
					r.Names = append(r.Names, "mine")
					r.Leaf.Tags[0] = "mine"
					r.Child.B[1] = 0xee
				}
				w, _ := proto.MarshalOptions{Deterministic: true}.Marshal(r)
				kept = append(kept, keptMsg{r: r, leaf: r.Leaf, names: r.Names, tag: r.Leaf.Tags, b: r.B, want: w})
			}
			for i, k := range kept {
				got, _ := proto.MarshalOptions{Deterministic: true}.Marshal(k.r)
				if !bytes.Equal(got, k.want) || k.r.Leaf != k.leaf || k.r.S != fmt.Sprintf("g%d-%d", g, i) {
					errs <- fmt.Errorf("sender %d message %d changed after it was received: %v", g, i, k.r)
					return
				}
			}
			errs <- nil
		})
	}
	wg.Wait()
	for range senders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestSpareRingWindowAhead: a sender that runs a window ahead of its
// receiver gets the copies back through the Spare's ring once the stream
// is long, and a short stream makes no ring. The two sides run on two
// goroutines joined by a channel a window long, as a stream's queue
// joins them, so -race sees the ring's hand-over; every message arrives
// as it was sent.
func TestSpareRingWindowAhead(t *testing.T) {
	slot := new(Slot)
	newDir := func() Direction {
		return Direction{Limits: Limits{MaxSend: DefaultMaxSendMsgSize, MaxRecv: DefaultMaxRecvMsgSize, Spare: new(Spare)}, Slot: slot, Mode: Clone}
	}
	// A window at a time, each side in turn: the receiver gives back a
	// window of copies, the sender takes them.
	dir := newDir()
	m := &flat3.Flat{}
	copies := map[any]bool{}
	for round := range 8 {
		var sent []any
		for i := range spareRingSize {
			fillReused(m, round, i)
			v, _, err := dir.Send(m)
			if err != nil {
				t.Fatal(err)
			}
			sent = append(sent, v)
		}
		r := dir.Spare.ring.Load()
		if round*spareRingSize <= spareRingAfter && r != nil {
			t.Fatalf("round %d: a stream %d copies long made a ring", round, round*spareRingSize)
		}
		if r != nil && round > 0 && !copies[sent[0]] {
			t.Fatalf("round %d: Send made a new copy with %d in the ring", round, r.given.Load()-r.taken.Load())
		}
		clear(copies)
		for i, v := range sent {
			r := &flat3.Flat{}
			if err := dir.Receive(r, v); err != nil {
				t.Fatal(err)
			}
			if r.S != fmt.Sprintf("g%d-%d", round, i) {
				t.Fatalf("round %d message %d arrived as %q", round, i, r.S)
			}
			dir.Release(v)
			copies[v] = true
		}
	}
	r := dir.Spare.ring.Load()
	if r == nil {
		t.Fatalf("a stream %d copies long made no ring", 8*spareRingSize)
	}
	// The last window's copies wait in the Spare: one inline, the rest in
	// the ring.
	if n := r.given.Load() - r.taken.Load(); n != spareRingSize-1 {
		t.Fatalf("the ring holds %d copies after a window, want %d", n, spareRingSize-1)
	}
	// A spare copy holds on to nothing of the message it carried.
	for i := r.taken.Load(); i != r.given.Load(); i++ {
		if c := r.copies[i%spareRingSize].v.(*flat3.Flat); c.S != "" || c.B != nil || c.Names != nil || c.Leaf != nil || c.Leaves != nil || c.Child != nil {
			t.Fatalf("a copy in the ring keeps what it carried: %v", c)
		}
	}
	// A stream that ends gives its copies back for other streams.
	if n := dir.Spare.Len(); n != spareRingSize {
		t.Fatalf("the Spare holds %d copies after a window, want %d", n, spareRingSize)
	}
	dir.Spare.Retire()
	if n := dir.Spare.Len(); n != 0 {
		t.Fatalf("the Spare holds %d copies once retired", n)
	}
	for i := range spareRingSize + 1 { // the Spare takes again
		fillReused(m, 9, i)
		v, _, err := dir.Send(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := dir.Receive(&flat3.Flat{}, v); err != nil {
			t.Fatal(err)
		}
		dir.Release(v)
	}
	if n := dir.Spare.Len(); n != 1 {
		t.Fatalf("the Spare holds %d copies, want 1", n)
	}
	// A copy of another type leaves the ring's for their own pool.
	if got, _, err := dir.Send(&flat3.Leaf{S: "leaf"}); err != nil {
		t.Fatal(err)
	} else if l, ok := got.(*flat3.Leaf); !ok || l.S != "leaf" {
		t.Fatalf("a Leaf's copy is %T %v", got, got)
	}
	if n := dir.Spare.Len(); n != 0 {
		t.Fatalf("the Spare holds %d copies of another type", n)
	}

	// Two goroutines, a window apart.
	dir = newDir()
	const n = 20 * spareRingSize
	window := make(chan any, spareRingSize)
	done := make(chan error, 1)
	go func() {
		for i := range n {
			v := <-window
			r := &flat3.Flat{}
			if err := dir.Receive(r, v); err != nil {
				done <- err
				return
			}
			dir.Release(v)
			if r.S != fmt.Sprintf("g1-%d", i) || r.I != int32(i) || len(r.Names) != 2 || r.Names[0] != fmt.Sprint("n", i) {
				done <- fmt.Errorf("message %d arrived as %v", i, r)
				return
			}
		}
		done <- nil
	}()
	for i := range n {
		fillReused(m, 1, i)
		v, _, err := dir.Send(m)
		if err != nil {
			t.Fatal(err)
		}
		window <- v
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
