package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// barrierServer waits, before its first Send, until n calls of the group
// have started (or until limit passes), and records whether it had to give
// up waiting.
type barrierServer struct {
	listv1.UnimplementedListStringsServer
	name    string
	group   *barrier
	timeout *atomic.Int32
}

type barrier struct {
	n       int32
	started atomic.Int32
	all     chan struct{}
	once    sync.Once
}

func (b *barrierServer) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	if b.group.started.Add(1) == b.group.n {
		b.group.once.Do(func() { close(b.group.all) })
	}
	select {
	case <-b.group.all:
	case <-time.After(2 * time.Second):
		b.timeout.Add(1)
	case <-s.Context().Done():
		return s.Context().Err()
	}
	return s.Send(&listv1.ListResponse{Strings: []string{b.name}})
}

// TestAttackSortedMergeOpensShardsConcurrently: BUG.
//
// With WithSortedMerge, Proxy.Stream opens the shards' calls one after the
// other: fanin.MergeSorted pulls its sources lazily on the consumer's
// goroutine (iter.Pull), and a shard's call (OpenFunc, then the wait for
// its first response, fanout/call.go core.call/first) runs only when the
// merge first pulls that source, in loserTree advance (fanin/sorted.go,
// the `for i := range t.cursors { t.advance(i, yield) }` loop). So shard
// k+1 is not even called until shard k has sent its first response: the
// time to the first merged response is the sum of the shards' first
// response latencies instead of their maximum (Thanos, and the unordered
// merge here, call every store at once). Each backend below waits until all
// three have been called; with the bug the first waits in vain (2s each).
// Expected: every shard is called at once, so no backend gives up waiting.
func TestAttackSortedMergeOpensShardsConcurrently(t *testing.T) {
	for _, sorted := range []bool{false, true} {
		t.Run(fmt.Sprintf("sorted=%v", sorted), func(t *testing.T) {
			g := &barrier{n: 3, all: make(chan struct{})}
			var timeouts atomic.Int32
			var backends []fanout.Backend
			for i := range 3 {
				name := fmt.Sprintf("b%d", i)
				backends = append(backends, fanout.Backend{Name: name, Conn: channel(t, &barrierServer{name: name, group: g, timeout: &timeouts})})
			}
			var opts []fanout.Option
			if sorted {
				opts = append(opts, fanout.WithSortedMerge(byString))
			}
			p, err := fanout.New(open, backends, opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, errs := collect(t, p)
			if len(got) != 3 || errs != nil {
				t.Fatalf("got %q, %v", got, errs)
			}
			if n := timeouts.Load(); n != 0 {
				t.Errorf("%d of 3 backends waited 2s for the other shards to be called: the proxy called the shards one after the other, not at once", n)
			}
		})
	}
}

// TestAttackNewRefusesNilFuncs: BUG.
//
// New says it refuses options whose functions are not of the response type
// and claims to refuse bad input up front. A nil function passed to a
// generic option is stored in the config's `any` field as a typed nil, so
// the `!= nil` checks of core.takeFuncs (fanout/proxy.go) accept it:
//   - WithDedup[T](nil, nil) together with WithSortedMerge passes New, and
//     the proxy silently does not deduplicate (c.equal is a nil func);
//   - WithSortedMerge[T](nil) passes New and silently gives an unordered
//     merge.
//
// Expected: New returns an error for a nil cmp or a nil equal.
func TestAttackNewRefusesNilFuncs(t *testing.T) {
	b := &lister{strings: []string{"a", "b"}}
	c := &lister{strings: []string{"a", "c"}}
	backends := []fanout.Backend{{Name: "b", Conn: channel(t, b)}, {Name: "c", Conn: channel(t, c)}}
	t.Run("WithDedup(nil, nil)", func(t *testing.T) {
		p, err := fanout.New(open, backends, fanout.WithSortedMerge(byString), fanout.WithDedup[listv1.ListResponse](nil, nil))
		if err != nil {
			return // refused, as it should be
		}
		got, _ := collect(t, p)
		t.Errorf("New accepted WithDedup with a nil equal; Stream gave %q (no dedup)", got)
	})
	t.Run("WithSortedMerge(nil)", func(t *testing.T) {
		_, err := fanout.New(open, backends, fanout.WithSortedMerge[listv1.ListResponse](nil))
		if err == nil {
			t.Errorf("New accepted WithSortedMerge(nil); the merge silently is not sorted")
		}
	})
}

// TestAttackStatsAddUpUnderConcurrency runs many hedged and unhedged
// streams at once, some broken off early, some with their context cancelled,
// and checks that once they are over every call is counted once.
func TestAttackStatsAddUpUnderConcurrency(t *testing.T) {
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
		t.Logf("Stats snapshots with more ended calls than calls (or hedges than calls): %d (see TestAttackStatsSnapshotConsistent)", n)
	}
}

// TestAttackStatsSnapshotConsistent: BUG.
//
// BackendStats says "the calls still running are the rest of Calls", i.e.
// Calls - (Succeeded+Failed+Cancelled) >= 0. replica.snapshot
// (fanout/stats.go) loads calls before succeeded/failed/cancelled, while a
// call increments calls when it starts (newAttempt) and its outcome when it
// ends (record): a call that starts and ends between the two loads is
// counted as ended but not as started, so a concurrent Stats shows more
// calls ended than started (a negative number running). Expected: loading
// the outcomes before Calls (or a lock) keeps every snapshot consistent.
func TestAttackStatsSnapshotConsistent(t *testing.T) {
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

// TestAttackCtxAlreadyCancelled: every combination of options yields the
// context's status and ends, without leaking.
func TestAttackCtxAlreadyCancelled(t *testing.T) {
	a, b := newReplica("a", blocks), newReplica("b", blocks)
	l := &lister{strings: []string{"x"}}
	backends := []fanout.Backend{
		{Name: "a", Shard: "s", Conn: channel(t, a)},
		{Name: "b", Shard: "s", Conn: channel(t, b)},
		{Name: "l", Conn: channel(t, l)},
	}
	for name, opts := range map[string][]fanout.Option{
		"plain":  nil,
		"sorted": {fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, nil)},
		"hedged": {fanout.WithHedging(fanout.Hedging{Delay: time.Microsecond, Budget: 5}), fanout.WithFirstResponseTimeout(time.Hour)},
		"abort":  {fanout.WithPartialResponse(fanout.Abort), fanout.WithSortedMerge(byString)},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := fanout.New(open, backends, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var errs []error
			done := make(chan struct{})
			go func() {
				defer close(done)
				for resp, err := range p.Stream(ctx, &listv1.ListRequest{}) {
					if err == nil {
						continue // a backend may have answered first: allowed
					}
					_ = resp
					errs = append(errs, err)
				}
			}()
			select {
			case <-done:
			case <-time.After(waitLimit):
				t.Fatal("Stream with a cancelled context did not end")
			}
			if len(errs) != 1 || status.Code(errs[len(errs)-1]) != codes.Canceled {
				t.Errorf("errors %v; want one Canceled", errs)
			}
			for _, s := range p.Stats() {
				if s.Succeeded+s.Failed+s.Cancelled != s.Calls {
					t.Errorf("%+v does not add up", s)
				}
				if s.Failed != 0 {
					t.Errorf("%s: a call the caller cancelled counted as failed: %+v", s.Backend, s)
				}
			}
		})
	}
}

// TestAttackHedgeThreeReplicas: hedges go to each replica once at most and
// the stats add up; the one that answers wins.
func TestAttackHedgeThreeReplicas(t *testing.T) {
	a, b := newReplica("a", blocks), newReplica("b", blocks)
	c := newReplica("c", nil)
	p, err := fanout.New(open, []fanout.Backend{
		{Name: "a", Shard: "s", Conn: channel(t, a)},
		{Name: "b", Shard: "s", Conn: channel(t, b)},
		{Name: "c", Shard: "s", Conn: channel(t, c)},
	}, fanout.WithHedging(fanout.Hedging{Delay: time.Millisecond, Budget: 10}))
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		got, errs := collect(t, p)
		if len(got) != 1 || got[0] != "c" || errs != nil {
			t.Fatalf("got %q %v", got, errs)
		}
	}
	for _, s := range p.Stats() {
		if s.Succeeded+s.Failed+s.Cancelled != s.Calls {
			t.Errorf("%+v does not add up", s)
		}
	}
	if n := a.calls.Load() + b.calls.Load() + c.calls.Load(); n > 18 {
		t.Errorf("%d calls for 6 streams of 3 replicas", n)
	}
}

// TestAttackConcurrentStreamsOfOneSeq ranges over one Stream's sequence
// from several goroutines at once, breaking at different points.
func TestAttackConcurrentStreamsOfOneSeq(t *testing.T) {
	l1 := &lister{strings: []string{"a", "c", "e", "g"}}
	l2 := &lister{strings: []string{"b", "d", "f", "h"}}
	p, err := fanout.New(open, []fanout.Backend{{Name: "1", Conn: channel(t, l1)}, {Name: "2", Conn: channel(t, l2)}},
		fanout.WithSortedMerge(byString), fanout.WithIdleTimeout(time.Hour), fanout.WithFirstResponseTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	seq := p.Stream(t.Context(), &listv1.ListRequest{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			n := 0
			for _, err := range seq {
				if err != nil {
					t.Error(err)
				}
				n++
				if n == g {
					break
				}
			}
			if g == 0 && n != 8 {
				t.Errorf("got %d of 8", n)
			}
		})
	}
	wg.Wait()
}
