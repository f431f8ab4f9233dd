package batch_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/batch"
)

type item struct{ producer, seq int }

type msg struct{ items []item }

// TestAttackConcurrentAddFlushCloseMaxAge hammers a Sender with a tiny
// MaxAge from producers and flushers at once: sends never overlap, every
// item is sent exactly once and in each producer's order, no batch exceeds
// MaxItems or MaxBytes, a sent batch is not changed afterwards, and after
// Close nothing more is sent (goleak checks the timers).
func TestAttackConcurrentAddFlushCloseMaxAge(t *testing.T) {
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

// TestAttackMaxAgeSendErrorSticks: the error of a batch MaxAge sent is
// returned by the next Add and Flush and by every one after, and Close.
func TestAttackMaxAgeSendErrorSticks(t *testing.T) {
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

type errRecv struct {
	n   int
	err error
}

func (r *errRecv) Recv() (*msg, error) {
	if r.n == 0 {
		return nil, r.err
	}
	r.n--
	return &msg{items: []item{{0, r.n}, {1, r.n}}}, nil
}

// TestAttackItemsErrorOnceAndBreak: Items yields a non-EOF error once and
// ends, and a break mid-batch does not Recv again.
func TestAttackItemsErrorOnceAndBreak(t *testing.T) {
	boom := errors.New("boom")
	r := &errRecv{n: 2, err: boom}
	var items, errs int
	for _, err := range batch.Items(r, func(m *msg) []item { return m.items }) {
		if err != nil {
			errs++
			if err != boom {
				t.Fatal(err)
			}
			continue
		}
		items++
	}
	if items != 4 || errs != 1 {
		t.Fatalf("%d items, %d errors", items, errs)
	}
	r = &errRecv{n: 5, err: boom}
	for range batch.Items(r, func(m *msg) []item { return m.items }) {
		break
	}
	if r.n != 4 {
		t.Fatalf("break received %d batches", 5-r.n)
	}
}
