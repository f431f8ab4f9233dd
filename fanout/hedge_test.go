package fanout_test

import (
	"context"
	"errors"
	"slices"
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

// replicaServer is a ListStrings replica that sends its name once, after
// wait returns nil (at once if wait is nil); an error of wait ends the call.
type replicaServer struct {
	listv1.UnimplementedListStringsServer
	name      string
	wait      atomic.Pointer[func(ctx context.Context) error]
	calls     atomic.Int32
	started   chan struct{} // one value per call, if not nil
	cancelled atomic.Int32  // calls whose context ended while they waited
}

func newReplica(name string, wait func(ctx context.Context) error) *replicaServer {
	r := &replicaServer{name: name, started: make(chan struct{}, 100)}
	r.setWait(wait)
	return r
}

func (r *replicaServer) setWait(wait func(ctx context.Context) error) { r.wait.Store(&wait) }

func (r *replicaServer) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	r.calls.Add(1)
	select {
	case r.started <- struct{}{}:
	default:
	}
	if wait := *r.wait.Load(); wait != nil {
		if err := wait(s.Context()); err != nil {
			if s.Context().Err() != nil {
				r.cancelled.Add(1)
			}
			return err
		}
	}
	return s.Send(&listv1.ListResponse{Strings: []string{r.name}})
}

// waitFor waits, within waitLimit, until done says so.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waitLimit); !done(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// blocks waits until the call's context ends.
func blocks(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// twoReplicas is a proxy over one shard of replicas a and b, hedged with h.
func twoReplicas(t *testing.T, a, b *replicaServer, opts ...fanout.Option) *fanout.Proxy[listv1.ListRequest, listv1.ListResponse] {
	t.Helper()
	p, err := fanout.New(open, []fanout.Backend{
		{Name: a.name, Shard: "s", Conn: channel(t, a)},
		{Name: b.name, Shard: "s", Conn: channel(t, b)},
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func stats(p interface{ Stats() []fanout.BackendStats }, name string) fanout.BackendStats {
	for _, s := range p.Stats() {
		if s.Backend == name {
			return s
		}
	}
	return fanout.BackendStats{}
}

func TestHedgeWins(t *testing.T) {
	slow := newReplica("slow", blocks)
	fast := newReplica("fast", nil)
	// The delay leaves fast room to answer on a busy machine, so that its
	// own call is not hedged.
	p := twoReplicas(t, slow, fast, fanout.WithHedging(fanout.Hedging{Delay: 100 * time.Millisecond, Budget: 1}))
	// The first call goes to slow, the second to fast.
	for call := range 2 {
		got, errs := collect(t, p)
		if len(got) != 1 || got[0] != "fast" || errs != nil {
			t.Fatalf("call %d: got %q, %v; want fast's answer alone", call, got, errs)
		}
	}
	s, f := stats(p, "slow"), stats(p, "fast")
	if s.Calls != 1 || s.Cancelled != 1 {
		t.Errorf("slow: %+v; want its one call cancelled when the hedge won", s)
	}
	waitFor(t, "slow's handler to see its call cancelled", func() bool { return slow.cancelled.Load() == 1 })
	if f.Succeeded != 2 || f.Hedges != 1 || f.Failed != 0 {
		t.Errorf("fast: %+v; want 2 calls succeeded, one of them a hedge", f)
	}
}

func TestHedgeLoses(t *testing.T) {
	// first answers once the hedge has started on second, which never
	// answers: the first call wins and the hedge is cancelled.
	second := newReplica("second", blocks)
	first := newReplica("first", func(ctx context.Context) error {
		select {
		case <-second.started:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	p := twoReplicas(t, first, second, fanout.WithHedging(fanout.Hedging{Delay: time.Millisecond, Budget: 1}))
	got, errs := collect(t, p)
	if len(got) != 1 || got[0] != "first" || errs != nil {
		t.Fatalf("got %q, %v; want first's answer alone", got, errs)
	}
	if s := stats(p, "second"); s.Hedges != 1 || s.Cancelled != 1 {
		t.Errorf("second: %+v; want one hedge, cancelled", s)
	}
	if s := stats(p, "first"); s.Succeeded != 1 || s.Hedges != 0 {
		t.Errorf("first: %+v; want one call, not a hedge, succeeded", s)
	}
}

func TestHedgeAfterFailure(t *testing.T) {
	// A failure before the first response is hedged at once: the timer's
	// delay is never reached.
	down := newReplica("down", func(context.Context) error { return status.Error(codes.Unavailable, "down") })
	up := newReplica("up", nil)
	p := twoReplicas(t, down, up, fanout.WithHedging(fanout.Hedging{Delay: time.Hour, Budget: 1}))
	got, errs := collect(t, p)
	if len(got) != 1 || got[0] != "up" || errs != nil {
		t.Fatalf("got %q, %v; want up's answer and no error", got, errs)
	}
	if s := stats(p, "down"); s.Failed != 1 {
		t.Errorf("down: %+v; want one failed call", s)
	}
	if s := stats(p, "up"); s.Hedges != 1 || s.Succeeded != 1 {
		t.Errorf("up: %+v; want one hedge, succeeded", s)
	}
	// Without budget, the failure is the shard's.
	p = twoReplicas(t, down, up, fanout.WithHedging(fanout.Hedging{Delay: time.Hour, Budget: 0.01}))
	_, errs = collect(t, p)
	var be *fanout.BackendError
	if len(errs) != 1 || !errors.As(errs[0], &be) || be.Backend != "down" || status.Code(be) != codes.Unavailable {
		t.Errorf("errors %v, want down's Unavailable when the budget allows no hedge", errs)
	}
}

func TestHedgeBudget(t *testing.T) {
	// Both replicas answer well after the hedging delay, so every call
	// would be hedged if the budget allowed it.
	late := func(ctx context.Context) error {
		select {
		case <-time.After(50 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	a, b := newReplica("a", late), newReplica("b", late)
	const callers, rounds, budget = 8, 5, 0.25
	p := twoReplicas(t, a, b, fanout.WithHedging(fanout.Hedging{Delay: time.Millisecond, Budget: budget}))
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range rounds {
				if got, errs := collect(t, p); len(got) != 1 || errs != nil {
					t.Errorf("got %q, %v; want one answer", got, errs)
				}
			}
		})
	}
	wg.Wait()
	hedges := stats(p, "a").Hedges + stats(p, "b").Hedges
	if limit := int64(budget * callers * rounds); hedges > limit || hedges == 0 {
		t.Errorf("%d hedges in %d calls, want at least one and at most %d (%v of calls)", hedges, callers*rounds, limit, budget)
	}
}

func TestHedgeAtPercentile(t *testing.T) {
	a, b := newReplica("a", nil), newReplica("b", nil)
	p := twoReplicas(t, a, b, fanout.WithHedging(fanout.Hedging{Percentile: 50, Budget: 1}))
	// Until a shard has seen enough first responses, a percentile alone
	// does not hedge.
	for range 15 {
		collect(t, p)
	}
	if h := stats(p, "a").Hedges + stats(p, "b").Hedges; h != 0 {
		t.Fatalf("%d hedges before 16 first responses, want none", h)
	}
	for range 10 {
		collect(t, p)
	}
	// Now a stops answering: the delay, measured from fast answers, is
	// short, and a's calls are hedged to b.
	a.setWait(blocks)
	for call := range 2 {
		got, errs := collect(t, p)
		if len(got) != 1 || got[0] != "b" || errs != nil {
			t.Fatalf("call %d after a stopped: got %q, %v; want b's answer", call, got, errs)
		}
	}
	// b's own calls, slower than the fast median at times, may be hedged
	// to a too, which b then beats.
	if s := stats(p, "a"); s.Cancelled < 1 {
		t.Errorf("a: %+v; want at least the call b's hedge beat cancelled", s)
	}
}

func TestHedgeFirstResponseTimeout(t *testing.T) {
	a, b := newReplica("a", blocks), newReplica("b", blocks)
	p := twoReplicas(t, a, b,
		fanout.WithHedging(fanout.Hedging{Delay: time.Millisecond, Budget: 1}),
		fanout.WithFirstResponseTimeout(200*time.Millisecond))
	got, errs := collect(t, p)
	if len(got) != 0 || len(errs) != 1 || status.Code(errs[0]) != codes.DeadlineExceeded {
		t.Fatalf("got %q, %v; want the shard's DeadlineExceeded", got, errs)
	}
	for _, s := range p.Stats() {
		if s.Calls != 1 || s.Succeeded != 0 || s.Calls != s.Failed+s.Cancelled {
			t.Errorf("%s: %+v; want one call, ended and not succeeded", s.Backend, s)
		}
	}
}

func TestHedgeCallerCancels(t *testing.T) {
	a, b := newReplica("a", blocks), newReplica("b", blocks)
	p := twoReplicas(t, a, b, fanout.WithHedging(fanout.Hedging{Delay: time.Millisecond, Budget: 1}))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-b.started // the hedge has started
		cancel()
	}()
	var last error
	for _, err := range p.Stream(ctx, &listv1.ListRequest{}) {
		last = err
	}
	if status.Code(last) != codes.Canceled {
		t.Errorf("the stream ended with %v, want Canceled", last)
	}
	for _, s := range p.Stats() {
		if s.Calls != 1 || s.Cancelled != 1 {
			t.Errorf("%s: %+v; want one call, cancelled", s.Backend, s)
		}
	}
}

// TestHedgeThreeReplicas: hedges go to each replica once at most and
// the stats add up; the one that answers wins.
func TestHedgeThreeReplicas(t *testing.T) {
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

func TestCooldown(t *testing.T) {
	down := newReplica("down", func(context.Context) error { return status.Error(codes.Unavailable, "down") })
	refuses := newReplica("refuses", func(context.Context) error { return status.Error(codes.InvalidArgument, "bad request") })
	up := newReplica("up", nil)
	failures := func(p *fanout.Proxy[listv1.ListRequest, listv1.ListResponse], calls int) int {
		n := 0
		for range calls {
			if _, errs := collect(t, p); errs != nil {
				n++
			}
		}
		return n
	}
	t.Run("cooldown=default", func(t *testing.T) {
		p := twoReplicas(t, down, up)
		if n := failures(p, 6); n != 1 {
			t.Errorf("%d of 6 calls failed, want only the first: the failed replica is passed over", n)
		}
	})
	t.Run("cooldown=0", func(t *testing.T) {
		p := twoReplicas(t, down, up, fanout.WithCooldown(0))
		if n := failures(p, 6); n != 3 {
			t.Errorf("%d of 6 calls failed, want every other one, strictly in turn", n)
		}
	})
	t.Run("cooldown=ends", func(t *testing.T) {
		const cooldown = 20 * time.Millisecond
		p := twoReplicas(t, down, up, fanout.WithCooldown(cooldown))
		failures(p, 1)
		time.Sleep(2 * cooldown)
		if n := failures(p, 2); n != 1 {
			t.Errorf("after the cooldown, %d of 2 calls failed, want the failed replica tried again", n)
		}
	})
	t.Run("error=the-request's", func(t *testing.T) {
		// InvalidArgument is the request's fault, not the replica's.
		p := twoReplicas(t, refuses, up)
		if n := failures(p, 6); n != 3 {
			t.Errorf("%d of 6 calls failed, want every other one: a refusal is no sign of ill health", n)
		}
	})
}

func TestHedgePassesOverCoolingReplicas(t *testing.T) {
	// Three replicas called in turn: down fails and then cools down, up
	// answers, slow stalls. A budget of 2 allows two hedges a call.
	slow := newReplica("slow", blocks)
	down := newReplica("down", func(context.Context) error { return status.Error(codes.Unavailable, "down") })
	up := newReplica("up", nil)
	p, err := fanout.New(open, []fanout.Backend{
		{Name: "down", Shard: "s", Conn: channel(t, down)},
		{Name: "up", Shard: "s", Conn: channel(t, up)},
		{Name: "slow", Shard: "s", Conn: channel(t, slow)},
	}, fanout.WithHedging(fanout.Hedging{Delay: 10 * time.Millisecond, Budget: 2}), fanout.WithCooldown(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// Call 1 goes to down, which fails and is hedged at once to up; call 2
	// goes to up; call 3 to slow, whose hedge would go to down, next in
	// turn, but skips it for up while it cools down.
	for call := 1; call <= 3; call++ {
		if got, errs := collect(t, p); !slices.Equal(got, []string{"up"}) || errs != nil {
			t.Fatalf("call %d: %q, %v; want up's answer", call, got, errs)
		}
	}
	if s := stats(p, "down"); s.Calls != 1 {
		t.Errorf("down: %+v; want its first call alone, no hedge while it cools down", s)
	}
}
