package batch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/batch"
	"github.com/localgrpc/localgrpc/batch/internal/tagzoo"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// TestMaxAgeSendErrorSticks: the error of a batch MaxAge sent is
// returned by the next Add and Flush and by every one after, and Close.
func TestMaxAgeSendErrorSticks(t *testing.T) {
	boom := errors.New("boom")
	var sends atomic.Int32
	s := batch.NewSender(func(*msg) error { sends.Add(1); return boom },
		func(m *msg, it item) { m.items = append(m.items, it) }, batch.MaxAge(time.Microsecond), batch.MaxItems(1000))
	if err := s.Add(item{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(waitLimit); sends.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("MaxAge never sent")
		}
	}
	for range 3 {
		if err := s.Add(item{}); err != boom {
			t.Fatalf("Add: %v", err)
		}
		if err := s.Flush(); err != boom {
			t.Fatalf("Flush: %v", err)
		}
	}
	if err := s.Close(); err != boom {
		t.Fatalf("Close: %v", err)
	}
	if n := sends.Load(); n != 1 {
		t.Fatalf("%d sends after the failed one", n-1)
	}
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

type item struct{ producer, seq int }

type msg struct{ items []item }

// TestConcurrentAddFlushAndClose hammers a Sender with a tiny MaxAge from
// producers and flushers at once: sends never overlap, every
// item is sent exactly once and in each producer's order, no batch exceeds
// MaxItems or MaxBytes, a sent batch is not changed afterwards, and after
// Close nothing more is sent (goleak checks the timers).
func TestConcurrentAddFlushAndClose(t *testing.T) {
	for round := range 20 {
		var (
			mu      sync.Mutex
			sending atomic.Int32
			sent    []*msg
			lens    []int
			closed  atomic.Bool
		)
		send := func(m *msg) error {
			if sending.Add(1) > 1 {
				t.Error("two sends at once")
			}
			defer sending.Add(-1)
			if closed.Load() {
				t.Error("send after Close returned")
			}
			mu.Lock()
			sent = append(sent, m)
			lens = append(lens, len(m.items))
			mu.Unlock()
			return nil
		}
		const maxItems = 7
		opts := []batch.Option{batch.MaxItems(maxItems), batch.MaxAge(time.Duration(1+round%3) * time.Microsecond)}
		if round%2 == 0 {
			opts = append(opts, batch.MaxBytes(20), batch.ItemSize(func(it item) int { return it.seq % 25 }))
		}
		s := batch.NewSender(send, func(m *msg, it item) { m.items = append(m.items, it) }, opts...)
		var wg sync.WaitGroup
		const producers, perProducer = 4, 300
		for p := range producers {
			wg.Go(func() {
				for i := range perProducer {
					if err := s.Add(item{p, i}); err != nil {
						t.Error(err)
						return
					}
					if i%50 == 0 {
						time.Sleep(10 * time.Microsecond)
					}
				}
			})
		}
		wg.Go(func() {
			for range 200 {
				if err := s.Flush(); err != nil {
					t.Error(err)
				}
			}
		})
		wg.Wait()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		closed.Store(true)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(item{}); !errors.Is(err, batch.ErrClosed) {
			t.Fatalf("Add after Close: %v", err)
		}
		mu.Lock()
		next := make([]int, producers)
		for k, m := range sent {
			if len(m.items) != lens[k] {
				t.Fatalf("batch %d changed after its send: %d items, then %d", k, lens[k], len(m.items))
			}
			if len(m.items) == 0 || len(m.items) > maxItems {
				t.Fatalf("batch %d of %d items", k, len(m.items))
			}
			for _, it := range m.items {
				if it.seq != next[it.producer] {
					t.Fatalf("producer %d: item %d after %d", it.producer, it.seq, next[it.producer]-1)
				}
				next[it.producer]++
			}
		}
		for p, n := range next {
			if n != perProducer {
				t.Fatalf("producer %d: %d of %d items sent", p, n, perProducer)
			}
		}
		mu.Unlock()
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

// itemFields are tagzoo.Batch's fields of items, whose tags are one to
// five bytes long.
var itemFields = []struct {
	number int32
	field  func(*tagzoo.Batch) *[]*tagzoo.Item
}{
	{15, func(b *tagzoo.Batch) *[]*tagzoo.Item { return &b.Tag1 }},
	{16, func(b *tagzoo.Batch) *[]*tagzoo.Item { return &b.Tag2 }},
	{2047, func(b *tagzoo.Batch) *[]*tagzoo.Item { return &b.Tag2Last }},
	{2048, func(b *tagzoo.Batch) *[]*tagzoo.Item { return &b.Tag3 }},
	{262144, func(b *tagzoo.Batch) *[]*tagzoo.Item { return &b.Tag4 }},
	{33554432, func(b *tagzoo.Batch) *[]*tagzoo.Item { return &b.Tag5 }},
	{536870911, func(b *tagzoo.Batch) *[]*tagzoo.Item { return &b.Tag5Last }},
}

// checkBatches fails t unless every batch of more than one item is at most
// maxBytes encoded, every one but the last is too full for another item,
// which costs one bytes, and there are want items in all.
func checkBatches[I any](t *testing.T, sent []*tagzoo.Batch, items func(*tagzoo.Batch) []I, maxBytes, one, want int) {
	t.Helper()
	n := 0
	for i, b := range sent {
		n += len(items(b))
		size := proto.Size(b)
		if size > maxBytes && len(items(b)) > 1 {
			t.Errorf("batch %d of %d items is %d bytes, over MaxBytes %d", i, len(items(b)), size, maxBytes)
		}
		if i < len(sent)-1 && size+one <= maxBytes {
			t.Errorf("batch %d is %d bytes, sent with room for another item of %d under MaxBytes %d", i, size, one, maxBytes)
		}
	}
	if n != want {
		t.Errorf("%d items sent, want %d", n, want)
	}
}

// TestMaxBytesCountsTheFieldsTag: an item costs a batch its tag, whose
// length depends on the field's number, and its length: outside testers
// saw 1,200-byte batches under MaxBytes(1000) with a two-byte tag.
func TestMaxBytesCountsTheFieldsTag(t *testing.T) {
	const items = 500
	for _, f := range itemFields {
		for _, maxBytes := range []int{100, 1000, 4096} {
			for _, itemBytes := range []int{0, 1, 20, 300} {
				t.Run(fmt.Sprintf("field=%d/max-bytes=%d/item-bytes=%d", f.number, maxBytes, itemBytes), func(t *testing.T) {
					var sent []*tagzoo.Batch
					send := func(b *tagzoo.Batch) error { sent = append(sent, b); return nil }
					s := batch.NewSender(send, batch.Appender(f.field, 64), batch.MaxItems(items), batch.MaxBytes(maxBytes))
					it := &tagzoo.Item{Data: make([]byte, itemBytes)}
					for range items {
						if err := s.Add(it); err != nil {
							t.Fatal(err)
						}
					}
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					one := &tagzoo.Batch{}
					*f.field(one) = []*tagzoo.Item{it}
					checkBatches(t, sent, func(b *tagzoo.Batch) []*tagzoo.Item { return *f.field(b) }, maxBytes, proto.Size(one), items)
				})
			}
		}
	}
	t.Run("field=100/item-size=len", func(t *testing.T) {
		const maxBytes = 1000
		var sent []*tagzoo.Batch
		send := func(b *tagzoo.Batch) error { sent = append(sent, b); return nil }
		s := batch.NewSender(send, batch.Appender(func(b *tagzoo.Batch) *[]string { return &b.Strings }, 64),
			batch.MaxItems(items), batch.MaxBytes(maxBytes), batch.ItemSize(func(s string) int { return len(s) }))
		for range items {
			if err := s.Add("x"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		checkBatches(t, sent, (*tagzoo.Batch).GetStrings, maxBytes, proto.Size(&tagzoo.Batch{Strings: []string{"x"}}), items)
	})
}

// notAMessage is a batch type that is not a proto.Message, as a
// gogoproto one is not: its field's number is not known to the Sender.
type notAMessage struct{ b *tagzoo.Batch }

// TestMaxBytesOfABatchThatIsNotAMessage: a batch whose field's number the
// Sender cannot see is kept to MaxBytes whatever the number.
func TestMaxBytesOfABatchThatIsNotAMessage(t *testing.T) {
	const maxBytes = 1000
	var sent []*tagzoo.Batch
	send := func(m *notAMessage) error { sent = append(sent, m.b); return nil }
	add := func(m *notAMessage, item *tagzoo.Item) {
		if m.b == nil {
			m.b = &tagzoo.Batch{}
		}
		m.b.Tag5Last = append(m.b.Tag5Last, item)
	}
	s := batch.NewSender(send, add, batch.MaxItems(1000), batch.MaxBytes(maxBytes))
	it := &tagzoo.Item{Data: []byte("x")}
	for range 1000 {
		if err := s.Add(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkBatches(t, sent, (*tagzoo.Batch).GetTag5Last, maxBytes, proto.Size(&tagzoo.Batch{Tag5Last: []*tagzoo.Item{it}}), 1000)
}

// batchStreamer streams what a StreamRequest asks for in batches of a
// Sender with its MaxBytes.
type batchStreamer struct {
	tagzoo.UnimplementedBatchesServer
}

func (batchStreamer) Stream(req *tagzoo.StreamRequest, stream grpc.ServerStreamingServer[tagzoo.Batch]) error {
	i := slices.IndexFunc(itemFields, func(f struct {
		number int32
		field  func(*tagzoo.Batch) *[]*tagzoo.Item
	}) bool {
		return f.number == req.Field
	})
	if i < 0 {
		return status.Errorf(codes.InvalidArgument, "no field %d of items", req.Field)
	}
	s := batch.NewSender(stream.Send, batch.Appender(itemFields[i].field, 64),
		batch.MaxItems(int(req.Items)), batch.MaxBytes(int(req.MaxBytes)))
	defer s.Close()
	for range req.Items {
		if err := s.Add(&tagzoo.Item{Data: make([]byte, req.ItemBytes)}); err != nil {
			return err
		}
	}
	return s.Flush()
}

// TestMaxBytesWithinMaxCallRecvMsgSize: a receiver whose limit is n takes
// every batch of a Sender with MaxBytes(n), whatever the field's number.
func TestMaxBytesWithinMaxCallRecvMsgSize(t *testing.T) {
	ch := inproc.New()
	t.Cleanup(ch.Stop)
	tagzoo.RegisterBatchesServer(ch, batchStreamer{})
	conns := map[string]grpc.ClientConnInterface{
		"inproc": ch,
		"grpc":   servertest.GRPCOverBufconn(t, func(r grpc.ServiceRegistrar) { tagzoo.RegisterBatchesServer(r, batchStreamer{}) }, nil),
	}
	const items = 2000
	for name, cc := range conns {
		for _, f := range itemFields {
			for _, maxBytes := range []int{100, 1000, 4096} {
				t.Run(fmt.Sprintf("transport=%s/field=%d/max-bytes=%d", name, f.number, maxBytes), func(t *testing.T) {
					ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
					defer cancel()
					req := &tagzoo.StreamRequest{Field: f.number, Items: items, ItemBytes: 1, MaxBytes: int32(maxBytes)}
					stream, err := tagzoo.NewBatchesClient(cc).Stream(ctx, req, grpc.MaxCallRecvMsgSize(maxBytes))
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, err := range batch.Items(stream, func(b *tagzoo.Batch) []*tagzoo.Item { return *f.field(b) }) {
						if err != nil {
							t.Fatalf("after %d items: %v", n, err)
						}
						n++
					}
					if n != items {
						t.Errorf("%d items, want %d", n, items)
					}
				})
			}
		}
	}
}
