package fanout_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func TestStats(t *testing.T) {
	good := &lister{strings: []string{"a", "b", "c"}}
	bad := &lister{strings: []string{"x", "y"}, failAfter: 1, failErr: status.Error(codes.Internal, "broken")}
	var mu sync.Mutex
	var calls []fanout.CallStats
	p, err := fanout.New(open, []fanout.Backend{
		{Name: "good", Shard: "g", Conn: channel(t, good)},
		{Name: "bad", Shard: "b", Conn: channel(t, bad)},
	}, fanout.WithStatsHandler(func(s fanout.CallStats) {
		mu.Lock()
		calls = append(calls, s)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	collect(t, p)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("%d calls reported, want 2: %+v", len(calls), calls)
	}
	size := func(s string) int64 { return int64(proto.Size(&listv1.ListResponse{Strings: []string{s}})) }
	var good0, bad0 fanout.CallStats
	for _, c := range calls[:2] {
		if c.Backend == "good" {
			good0 = c
		} else {
			bad0 = c
		}
	}
	if good0.Outcome != fanout.Succeeded || good0.Code != codes.OK || good0.Err != nil || good0.Messages != 3 ||
		good0.Bytes != size("a")+size("b")+size("c") || good0.Shard != "g" || good0.Hedge ||
		good0.FirstResponse <= 0 || good0.Duration < good0.FirstResponse || good0.Begin.IsZero() {
		t.Errorf("good's call: %+v", good0)
	}
	if bad0.Outcome != fanout.Failed || bad0.Code != codes.Internal || bad0.Messages != 1 || bad0.Bytes != size("x") {
		t.Errorf("bad's call: %+v; want failed with Internal after one message", bad0)
	}
	// The totals are the sums of the calls.
	for _, s := range p.Stats() {
		var want fanout.BackendStats
		for _, c := range calls {
			if c.Backend != s.Backend {
				continue
			}
			want.Calls++
			want.Messages += c.Messages
			want.Bytes += c.Bytes
			want.CallTime += c.Duration
			want.FirstResponseTime += c.FirstResponse
			switch c.Outcome {
			case fanout.Succeeded:
				want.Succeeded++
			case fanout.Failed:
				want.Failed++
			case fanout.Cancelled:
				want.Cancelled++
			}
		}
		if s.Calls != want.Calls || s.Messages != want.Messages || s.Bytes != want.Bytes || s.CallTime != want.CallTime ||
			s.FirstResponseTime != want.FirstResponseTime || s.Succeeded != want.Succeeded || s.Failed != want.Failed || s.Cancelled != want.Cancelled {
			t.Errorf("%s's totals %+v, want the sums of its calls %+v", s.Backend, s, want)
		}
	}
}

func TestStatsOfABreak(t *testing.T) {
	// A consumer that stops after one response cancels the call, which
	// holds its second.
	held := &lister{strings: []string{"a", "b"}, failAfter: 1, hold: make(chan struct{})}
	t.Cleanup(func() { close(held.hold) })
	ended := make(chan fanout.CallStats, 1)
	p, err := fanout.New(open, []fanout.Backend{{Name: "held", Conn: channel(t, held)}},
		fanout.WithStatsHandler(func(s fanout.CallStats) { ended <- s }))
	if err != nil {
		t.Fatal(err)
	}
	for range p.Stream(t.Context(), &listv1.ListRequest{}) {
		break
	}
	if c := <-ended; c.Outcome != fanout.Cancelled || c.Code != codes.Canceled || c.Messages != 1 {
		t.Errorf("call %+v, want cancelled after one message", c)
	}
	if s := p.Stats()[0]; s.Calls != 1 || s.Cancelled != 1 {
		t.Errorf("totals %+v, want one call, cancelled", s)
	}
}

func TestStatsWithoutHandlerCountNoBytes(t *testing.T) {
	p, err := fanout.New(open, []fanout.Backend{{Name: "a", Conn: channel(t, &lister{strings: []string{"a", "b"}})}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, p)
	if s := p.Stats()[0]; s.Messages != 2 || s.Bytes != 0 || s.Succeeded != 1 || s.FirstResponses != 1 {
		t.Errorf("stats %+v; want 2 messages, no bytes, one call succeeded", s)
	}
}

// TestStatsAddUpUnderConcurrency runs many hedged and unhedged
// streams at once, some broken off early, some with their context cancelled,
// and checks that once they are over every call is counted once.
func TestStatsAddUpUnderConcurrency(t *testing.T) {
	var handled sync.Map // backend -> *atomic.Int64
	handler := func(s fanout.CallStats) {
		v, _ := handled.LoadOrStore(s.Backend, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
		if (s.Err == nil) != (s.Outcome == fanout.Succeeded) {
			t.Errorf("%s: outcome %v with err %v", s.Backend, s.Outcome, s.Err)
		}
	}
	var flip atomic.Int32
	flaky := func(ctx context.Context) error {
		switch flip.Add(1) % 4 {
		case 0:
			return status.Error(codes.Unavailable, "flaky")
		case 1:
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	r1, r2, r3 := newReplica("r1", flaky), newReplica("r2", flaky), newReplica("r3", nil)
	other := &lister{strings: []string{"x", "y", "z"}}
	p, err := fanout.New(open, []fanout.Backend{
		{Name: "r1", Shard: "s", Conn: channel(t, r1)},
		{Name: "r2", Shard: "s", Conn: channel(t, r2)},
		{Name: "r3", Shard: "s", Conn: channel(t, r3)},
		{Name: "other", Conn: channel(t, other)},
	}, fanout.WithHedging(fanout.Hedging{Delay: 100 * time.Microsecond, Budget: 1}), fanout.WithStatsHandler(handler), fanout.WithCooldown(0))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var bad atomic.Int32
	// A reader of Stats while calls run: Calls counts started calls, and
	// those that ended are the rest, so they can never be more.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range p.Stats() {
				if ended := s.Succeeded + s.Failed + s.Cancelled; ended > s.Calls || s.Hedges > s.Calls {
					bad.Add(1)
				}
			}
		}
	})
	var streams sync.WaitGroup
	for g := range 8 {
		streams.Go(func() {
			for i := range 100 {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				n := 0
				for _, err := range p.Stream(ctx, &listv1.ListRequest{}) {
					n++
					if err != nil && ctx.Err() == nil {
						var be *fanout.BackendError
						if !errors.As(err, &be) {
							t.Errorf("error %v is not a *BackendError", err)
						}
					}
					if (g+i)%3 == 0 && n == 1 {
						break
					}
					if (g+i)%5 == 0 {
						cancel()
					}
				}
				cancel()
			}
		})
	}
	streams.Wait()
	close(stop)
	wg.Wait()
	for _, s := range p.Stats() {
		if ended := s.Succeeded + s.Failed + s.Cancelled; ended != s.Calls {
			t.Errorf("%s: %d calls, %d ended (%+v)", s.Backend, s.Calls, ended, s)
		}
		v, _ := handled.Load(s.Backend)
		if v == nil && s.Calls > 0 || v != nil && v.(*atomic.Int64).Load() != s.Calls {
			t.Errorf("%s: %d calls, handler saw %v", s.Backend, s.Calls, v)
		}
	}
	if n := bad.Load(); n > 0 {
		t.Logf("Stats snapshots with more ended calls than calls (or hedges than calls): %d (see TestStatsSnapshotConsistent)", n)
	}
}

// TestStatsSnapshotConsistent: BackendStats says the calls still running
// are the rest of Calls, so no snapshot has more calls ended
// (Succeeded+Failed+Cancelled) than started, while calls start and end
// beside it: a call counts as started when it starts and as ended when it
// ends, so a snapshot that loaded Calls before the outcomes would count a
// call that started and ended between the loads as ended only.
func TestStatsSnapshotConsistent(t *testing.T) {
	l := &lister{strings: []string{"x"}}
	p, err := fanout.New(open, []fanout.Backend{{Name: "l", Conn: channel(t, l)}})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var streams sync.WaitGroup
	for range 2 {
		streams.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for range p.Stream(context.Background(), &listv1.ListRequest{}) {
				}
			}
		})
	}
	defer streams.Wait()
	defer close(stop)
	deadline := time.Now().Add(3 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		s := p.Stats()[0]
		if ended := s.Succeeded + s.Failed + s.Cancelled; ended > s.Calls {
			t.Fatalf("snapshot %d: %d calls started but %d ended: %+v", n, s.Calls, ended, s)
		}
	}
}

func TestNewRefusesSettings(t *testing.T) {
	conn := channel(t, &lister{})
	backends := []fanout.Backend{{Name: "a", Conn: conn}}
	cases := []struct {
		name string
		opt  fanout.Option
		want string
	}{
		{"partial=unknown", fanout.WithPartialResponse(7), "WithPartialResponse"},
		{"first-timeout=negative", fanout.WithFirstResponseTimeout(-1), "negative"},
		{"idle-timeout=negative", fanout.WithIdleTimeout(-1), "negative"},
		{"cooldown=negative", fanout.WithCooldown(-1), "negative"},
		{"hedging=empty", fanout.WithHedging(fanout.Hedging{}), "Delay or a Percentile"},
		{"hedging=negative-delay", fanout.WithHedging(fanout.Hedging{Delay: -1}), "Delay"},
		{"hedging=percentile-100", fanout.WithHedging(fanout.Hedging{Percentile: 100}), "Percentile"},
		{"hedging=negative-budget", fanout.WithHedging(fanout.Hedging{Delay: 1, Budget: -0.1}), "Budget"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := fanout.New(open, backends, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error saying %q", err, tc.want)
			}
			if _, err := fanout.NewUnary(get, backends, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewUnary: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
