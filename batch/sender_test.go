package batch_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/batch"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// waitLimit bounds every wait of these tests.
const waitLimit = 10 * time.Second

// sink is a send function that keeps what it is sent, with a copy taken
// at send to tell whether the sender touched a batch afterwards.
type sink struct {
	mu      sync.Mutex
	batches []*structpb.ListValue
	copies  []*structpb.ListValue
	sent    chan struct{} // a value per batch, if not nil
	failAt  int           // the batch whose send fails, from 1; 0: none
	err     error
	sending atomic.Int32
	overlap atomic.Bool // two sends ran at once
}

func (s *sink) send(m *structpb.ListValue) error {
	if s.sending.Add(1) > 1 {
		s.overlap.Store(true)
	}
	defer s.sending.Add(-1)
	time.Sleep(time.Microsecond) // widen the window a concurrent send would use
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAt == len(s.batches)+1 {
		return s.err
	}
	s.batches = append(s.batches, m)
	s.copies = append(s.copies, proto.Clone(m).(*structpb.ListValue))
	if s.sent != nil {
		s.sent <- struct{}{}
	}
	return nil
}

func (s *sink) sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n []int
	for _, b := range s.batches {
		n = append(n, len(b.Values))
	}
	return n
}

func appendValue(m *structpb.ListValue, v *structpb.Value) { m.Values = append(m.Values, v) }

func number(i int) *structpb.Value { return structpb.NewNumberValue(float64(i)) }

func TestMaxItems(t *testing.T) {
	var out sink
	s := batch.NewSender(out.send, appendValue, batch.MaxItems(64))
	for i := range 130 {
		if err := s.Add(number(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := out.sizes(); fmt.Sprint(got) != "[64 64]" {
		t.Errorf("before Flush, batches of %v, want [64 64]", got)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.sizes(); fmt.Sprint(got) != "[64 64 2]" {
		t.Errorf("after Flush, batches of %v, want [64 64 2]", got)
	}
	// Every item, in order.
	i := 0
	for _, b := range out.batches {
		for _, v := range b.Values {
			if v.GetNumberValue() != float64(i) {
				t.Fatalf("item %d is %v", i, v)
			}
			i++
		}
	}
	if err := s.Flush(); err != nil || len(out.sizes()) != 3 {
		t.Errorf("a Flush of nothing: %v, %d batches; want no error and no send", err, len(out.sizes()))
	}
}

func TestDefaultMaxItems(t *testing.T) {
	var out sink
	s := batch.NewSender(out.send, appendValue)
	for i := range batch.DefaultMaxItems {
		s.Add(number(i))
	}
	if got := out.sizes(); len(got) != 1 || got[0] != batch.DefaultMaxItems {
		t.Errorf("batches %v, want one of %d", got, batch.DefaultMaxItems)
	}
}

func TestMaxBytes(t *testing.T) {
	const maxBytes = 1000
	var out sink
	s := batch.NewSender(out.send, appendValue, batch.MaxItems(1000), batch.MaxBytes(maxBytes))
	// Items of every size, one of them bigger than maxBytes.
	for i := range 60 {
		n := (i * 37) % 300
		if i == 30 {
			n = 3 * maxBytes
		}
		if err := s.Add(structpb.NewStringValue(strings.Repeat("x", n))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	items, big := 0, 0
	for i, b := range out.batches {
		items += len(b.Values)
		size := proto.Size(b)
		switch {
		case len(b.Values) == 1 && size > maxBytes:
			big++
		case size > maxBytes:
			t.Errorf("batch %d of %d items is %d bytes, over MaxBytes %d", i, len(b.Values), size, maxBytes)
		case i < len(out.batches)-1 && proto.Size(out.batches[i+1]) <= maxBytes && size < maxBytes/2:
			// Only the batch the big item pushed out, and the last, may be
			// small.
			t.Errorf("batch %d is %d bytes, sent long before MaxBytes %d", i, size, maxBytes)
		}
	}
	if items != 60 || big != 1 {
		t.Errorf("%d items sent, %d alone over MaxBytes; want 60 and the big one alone", items, big)
	}
}

func TestMaxAge(t *testing.T) {
	out := sink{sent: make(chan struct{}, 10)}
	s := batch.NewSender(out.send, appendValue, batch.MaxAge(20*time.Millisecond))
	defer s.Close()
	start := time.Now()
	s.Add(number(1))
	s.Add(number(2))
	select {
	case <-out.sent:
	case <-time.After(waitLimit):
		t.Fatal("a batch with nothing more coming was never sent")
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("sent after %v, before MaxAge", waited)
	}
	if got := out.sizes(); len(got) != 1 || got[0] != 2 {
		t.Errorf("batches %v, want one of both items", got)
	}
	// A new item starts a new age.
	s.Add(number(3))
	select {
	case <-out.sent:
	case <-time.After(waitLimit):
		t.Fatal("the second batch was never sent")
	}
}

func TestSendErrorIsReturned(t *testing.T) {
	failure := errors.New("stream broken")
	t.Run("by=add", func(t *testing.T) {
		out := sink{failAt: 2, err: failure}
		s := batch.NewSender(out.send, appendValue, batch.MaxItems(2))
		var errs []error
		for i := range 6 {
			errs = append(errs, s.Add(number(i)))
		}
		want := []error{nil, nil, nil, failure, failure, failure}
		for i := range want {
			if !errors.Is(errs[i], want[i]) && errs[i] != want[i] {
				t.Errorf("Add %d: %v, want %v", i, errs[i], want[i])
			}
		}
		if err := s.Flush(); !errors.Is(err, failure) {
			t.Errorf("Flush after a failed send: %v, want its error", err)
		}
	})
	t.Run("by=max-age", func(t *testing.T) {
		out := sink{failAt: 1, err: failure}
		s := batch.NewSender(out.send, appendValue, batch.MaxAge(time.Millisecond))
		s.Add(number(1))
		deadline := time.Now().Add(waitLimit)
		var err error
		for err == nil && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			err = s.Add(number(2)) // buffered until the timer's send fails
		}
		if !errors.Is(err, failure) {
			t.Errorf("Add after a timer's failed send: %v, want its error", err)
		}
		if err := s.Close(); !errors.Is(err, failure) {
			t.Errorf("Close: %v, want the send's error", err)
		}
	})
}

func TestConcurrentAddsNeverSendAtOnce(t *testing.T) {
	var out sink
	s := batch.NewSender(out.send, appendValue, batch.MaxItems(3), batch.MaxAge(50*time.Microsecond))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				if err := s.Add(number(g*1000 + i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if out.overlap.Load() {
		t.Error("two sends ran at once")
	}
	total := 0
	for _, n := range out.sizes() {
		total += n
	}
	if total != 2000 {
		t.Errorf("%d items sent, want 2000", total)
	}
	// What was sent was never touched again.
	for i := range out.batches {
		if !proto.Equal(out.batches[i], out.copies[i]) {
			t.Fatalf("batch %d changed after it was sent", i)
		}
	}
}

// TestSendBetweenFlushAndAdd is the pattern of a bidirectional handler
// that sends its own messages between batches: after Flush, no timer of
// the Sender sends, so the handler's send never runs beside one, and comes
// after every item added before it.
func TestSendBetweenFlushAndAdd(t *testing.T) {
	var out sink
	s := batch.NewSender(out.send, appendValue, batch.MaxItems(4), batch.MaxAge(time.Microsecond))
	for i := range 300 {
		for j := range i % 6 {
			if err := s.Add(number(j)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := out.send(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("own")}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if out.overlap.Load() {
		t.Error("the handler's send ran beside a timer's")
	}
	// Between two of the handler's messages, the items of that round, in
	// order.
	i := 0
	for round := range 300 {
		want := 0
		for ; i < len(out.batches) && out.batches[i].Values[0].GetStringValue() != "own"; i++ {
			for _, v := range out.batches[i].Values {
				if v.GetNumberValue() != float64(want) {
					t.Fatalf("round %d: item %v, want %d", round, v, want)
				}
				want++
			}
		}
		if want != round%6 || i == len(out.batches) {
			t.Fatalf("round %d: %d items before the handler's message, want %d", round, want, round%6)
		}
		i++
	}
}

func TestAddAfterClose(t *testing.T) {
	var out sink
	s := batch.NewSender(out.send, appendValue)
	s.Add(number(1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(number(2)); !errors.Is(err, batch.ErrClosed) {
		t.Errorf("Add after Close: %v, want ErrClosed", err)
	}
	if got := out.sizes(); len(got) != 1 || got[0] != 1 {
		t.Errorf("batches %v, want Close to have sent the one item", got)
	}
}

func TestNewSenderRefuses(t *testing.T) {
	var out sink
	cases := []struct {
		name string
		new  func()
		want string
	}{
		{"max-items=0", func() { batch.NewSender(out.send, appendValue, batch.MaxItems(0)) }, "MaxItems"},
		{"max-bytes=negative", func() { batch.NewSender(out.send, appendValue, batch.MaxBytes(-1)) }, "MaxBytes"},
		{"max-age=negative", func() { batch.NewSender(out.send, appendValue, batch.MaxAge(-1)) }, "MaxAge"},
		{"item-size=other-type", func() {
			batch.NewSender(out.send, appendValue, batch.MaxBytes(10), batch.ItemSize(func(string) int { return 0 }))
		}, "ItemSize"},
		{"max-bytes=not-proto", func() {
			batch.NewSender(func(*[]string) error { return nil }, func(m *[]string, s string) { *m = append(*m, s) }, batch.MaxBytes(10))
		}, "ItemSize"},
		{"send=nil", func() { batch.NewSender(nil, appendValue) }, "send"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("NewSender: panic %v, want one naming %q", r, tc.want)
				}
			}()
			tc.new()
		})
	}
}
