package fanout_test

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

	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// waitLimit bounds every wait of these tests.
const waitLimit = 10 * time.Second

// lister is a ListStrings backend: it sends its strings, one per message,
// then ends with err; before sending it waits for hold, and after sending
// failAfter strings it fails with failErr, if set.
type lister struct {
	listv1.UnimplementedListStringsServer
	strings   []string
	hold      chan struct{} // nil: no wait; closed: go on
	failAfter int
	failErr   error
	calls     atomic.Int32
	ended     chan error // the handler's context's error, when it ends early
}

func (l *lister) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	l.calls.Add(1)
	for i, str := range l.strings {
		if l.failErr != nil && i == l.failAfter {
			return l.failErr
		}
		if l.hold != nil && i == l.failAfter {
			select {
			case <-l.hold:
			case <-s.Context().Done():
				if l.ended != nil {
					l.ended <- s.Context().Err()
				}
				return s.Context().Err()
			}
		}
		if err := s.Send(&listv1.ListResponse{Strings: []string{str}}); err != nil {
			return err
		}
	}
	if l.failErr != nil && l.failAfter >= len(l.strings) {
		return l.failErr
	}
	return nil
}

// channel is an inproc.Channel serving l until the test ends.
func channel(t *testing.T, l listv1.ListStringsServer) *inproc.Channel {
	ch := inproc.New()
	t.Cleanup(ch.Stop)
	listv1.RegisterListStringsServer(ch, l)
	return ch
}

func open(ctx context.Context, cc grpc.ClientConnInterface, r *listv1.ListRequest) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
	return listv1.NewListStringsClient(cc).List(ctx, r)
}

func byString(a, b *listv1.ListResponse) int { return strings.Compare(a.Strings[0], b.Strings[0]) }

func sameString(a, b *listv1.ListResponse) bool { return a.Strings[0] == b.Strings[0] }

// collect runs the proxy's stream to its end.
func collect(t *testing.T, p *fanout.Proxy[listv1.ListRequest, listv1.ListResponse]) ([]string, []error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	var got []string
	var errs []error
	for resp, err := range p.Stream(ctx, &listv1.ListRequest{}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, resp.Strings[0])
	}
	return got, errs
}

func TestMergesOneReplicaPerShard(t *testing.T) {
	a1 := &lister{strings: []string{"a", "c", "e"}}
	a2 := &lister{strings: []string{"a", "c", "e"}}
	b := &lister{strings: []string{"b", "c", "d"}}
	backends := []fanout.Backend{
		{Name: "a-1", Shard: "a", Conn: channel(t, a1)},
		{Name: "a-2", Shard: "a", Conn: channel(t, a2)},
		{Name: "b", Conn: channel(t, b)},
	}
	t.Run("merge=unordered", func(t *testing.T) {
		p, err := fanout.New(open, backends)
		if err != nil {
			t.Fatal(err)
		}
		got, errs := collect(t, p)
		slices.Sort(got)
		if want := []string{"a", "b", "c", "c", "d", "e"}; !slices.Equal(got, want) || errs != nil {
			t.Errorf("got %q, %v; want %q from one replica of a and from b", got, errs, want)
		}
	})
	t.Run("merge=sorted+dedup", func(t *testing.T) {
		p, err := fanout.New(open, backends, fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, nil))
		if err != nil {
			t.Fatal(err)
		}
		got, errs := collect(t, p)
		if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) || errs != nil {
			t.Errorf("got %q, %v; want %q", got, errs, want)
		}
	})
	if a1.calls.Load()+a2.calls.Load() != 2 || b.calls.Load() != 2 {
		t.Errorf("calls: a-1 %d, a-2 %d, b %d; want one call per shard per stream", a1.calls.Load(), a2.calls.Load(), b.calls.Load())
	}
	// One proxy calls the replicas of a shard in turn.
	a1.calls.Store(0)
	a2.calls.Store(0)
	p, err := fanout.New(open, backends)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		collect(t, p)
	}
	if a1.calls.Load() != 2 || a2.calls.Load() != 2 {
		t.Errorf("4 streams called a-1 %d and a-2 %d times, want each twice", a1.calls.Load(), a2.calls.Load())
	}
}

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

// TestSortedMergeOpensShardsConcurrently: with WithSortedMerge too, every
// shard is called at once, as Thanos calls every store, so that the first
// merged response waits for the slowest shard's first response, not for
// the sum of them: a merge that pulled its sources lazily, on the
// consumer's goroutine, would call shard k+1 only once shard k had sent
// its first response. Each backend below waits until all three have been
// called, 2s at most, and counts it if it gave up.
func TestSortedMergeOpensShardsConcurrently(t *testing.T) {
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

func TestPartialResponse(t *testing.T) {
	failure := status.Error(codes.Unavailable, "backend down")
	cases := []struct {
		name      string
		failAfter int
		policy    fanout.PartialResponse
		wantGood  int // responses from the healthy backend that must arrive
	}{
		{"fail=before-first/policy=warn", 0, fanout.Warn, 3},
		{"fail=mid-stream/policy=warn", 2, fanout.Warn, 3},
		{"fail=before-first/policy=abort", 0, fanout.Abort, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			good := &lister{strings: []string{"x", "y", "z"}}
			bad := &lister{strings: []string{"p", "q", "r"}, failAfter: tc.failAfter, failErr: failure}
			p, err := fanout.New(open, []fanout.Backend{
				{Name: "good", Conn: channel(t, good)},
				{Name: "bad", Conn: channel(t, bad)},
			}, fanout.WithPartialResponse(tc.policy))
			if err != nil {
				t.Fatal(err)
			}
			got, errs := collect(t, p)
			if len(errs) != 1 {
				t.Fatalf("errors %v, want the bad backend's one", errs)
			}
			var be *fanout.BackendError
			if !errors.As(errs[0], &be) || be.Backend != "bad" || status.Code(be) != codes.Unavailable {
				t.Errorf("error %v, want a *BackendError of backend bad wrapping Unavailable", errs[0])
			}
			goods := 0
			for _, s := range got {
				if s >= "x" {
					goods++
				}
			}
			if tc.policy == fanout.Warn && goods != tc.wantGood {
				t.Errorf("got %q: %d of the good backend's 3 responses, want all under Warn", got, goods)
			}
			if tc.policy == fanout.Abort {
				// Nothing follows the error: the stream ended with it.
				var afterErr []string
				seenErr := false
				for resp, err := range p.Stream(t.Context(), &listv1.ListRequest{}) {
					if err != nil {
						seenErr = true
					} else if seenErr {
						afterErr = append(afterErr, resp.Strings[0])
					}
				}
				if !seenErr || afterErr != nil {
					t.Errorf("under Abort: error seen %v, then responses %q; want the error last", seenErr, afterErr)
				}
			}
		})
	}
}

func TestTimeouts(t *testing.T) {
	// The timeouts leave the fast backend room on a busy machine; the slow
	// one waits until the test ends.
	cases := []struct {
		name      string
		failAfter int // where the slow backend stops to wait
		opt       fanout.Option
	}{
		{"timeout=first-response", 0, fanout.WithFirstResponseTimeout(500 * time.Millisecond)},
		{"timeout=idle", 1, fanout.WithIdleTimeout(500 * time.Millisecond)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			slow := &lister{strings: []string{"s1", "s2"}, failAfter: tc.failAfter, hold: make(chan struct{}), ended: make(chan error, 1)}
			t.Cleanup(func() { close(slow.hold) })
			fast := &lister{strings: []string{"f1", "f2"}}
			p, err := fanout.New(open, []fanout.Backend{
				{Name: "slow", Conn: channel(t, slow)},
				{Name: "fast", Conn: channel(t, fast)},
			}, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			got, errs := collect(t, p)
			if len(errs) != 1 || status.Code(errs[0]) != codes.DeadlineExceeded {
				t.Fatalf("errors %v, want the slow backend's DeadlineExceeded", errs)
			}
			if !slices.Contains(got, "f1") || !slices.Contains(got, "f2") || len(got) != 2+tc.failAfter {
				t.Errorf("got %q, want the fast backend's two and the slow one's first %d", got, tc.failAfter)
			}
			select {
			case <-slow.ended:
			case <-time.After(waitLimit):
				t.Error("the slow backend's call was not cancelled")
			}
		})
	}
}

func TestBreakCancelsEveryCall(t *testing.T) {
	for _, sorted := range []bool{false, true} {
		t.Run("sorted="+map[bool]string{false: "no", true: "yes"}[sorted], func(t *testing.T) {
			var backends []fanout.Backend
			var chs []*inproc.Channel
			for _, name := range []string{"a", "b", "c"} {
				l := &lister{strings: []string{name + "1", name + "2", name + "3"}, failAfter: 1, hold: make(chan struct{}), ended: make(chan error, 1)}
				t.Cleanup(func() { close(l.hold) })
				ch := channel(t, l)
				chs = append(chs, ch)
				backends = append(backends, fanout.Backend{Name: name, Conn: ch})
			}
			var opts []fanout.Option
			if sorted {
				opts = append(opts, fanout.WithSortedMerge(byString))
			}
			p, err := fanout.New(open, backends, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range p.Stream(t.Context(), &listv1.ListRequest{}) {
				if err != nil {
					t.Fatal(err)
				}
				break
			}
			// Every handler that started must end: it blocks until its
			// context ends (a call the break came before never starts).
			for i, ch := range chs {
				done := make(chan struct{})
				go func() { ch.GracefulStop(); close(done) }()
				select {
				case <-done:
				case <-time.After(waitLimit):
					t.Fatalf("backend %d's call was not cancelled when the loop broke", i)
				}

			}
		})
	}
}

func TestCallerContextEnds(t *testing.T) {
	l := &lister{strings: []string{"a", "b"}, failAfter: 1, hold: make(chan struct{}), ended: make(chan error, 1)}
	t.Cleanup(func() { close(l.hold) })
	p, err := fanout.New(open, []fanout.Backend{{Name: "a", Conn: channel(t, l)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var last error
	for resp, err := range p.Stream(ctx, &listv1.ListRequest{}) {
		if resp != nil {
			cancel()
		}
		last = err
	}
	if status.Code(last) != codes.Canceled {
		t.Errorf("the stream ended with %v, want Canceled", last)
	}
}

// TestCallerContextAlreadyCancelled: every combination of options yields the
// context's status and ends, without leaking.
func TestCallerContextAlreadyCancelled(t *testing.T) {
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

// TestConcurrentRangesOfOneStream ranges over one Stream's sequence
// from several goroutines at once, breaking at different points.
func TestConcurrentRangesOfOneStream(t *testing.T) {
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

func TestNewRefuses(t *testing.T) {
	conn := channel(t, &lister{})
	cases := []struct {
		name     string
		backends []fanout.Backend
		opts     []fanout.Option
		want     string
	}{
		{"no-backends", nil, nil, "at least one backend"},
		{"no-name", []fanout.Backend{{Conn: conn}}, nil, "no Name"},
		{"no-conn", []fanout.Backend{{Name: "a"}}, nil, "no Conn"},
		{"nil-pointer-conn", []fanout.Backend{{Name: "a", Conn: (*grpc.ClientConn)(nil)}}, nil, "no Conn"},
		{"same-name", []fanout.Backend{{Name: "a", Conn: conn}, {Name: "a", Conn: conn}}, nil, "two backends"},
		{"cmp-of-another-type", []fanout.Backend{{Name: "a", Conn: conn}}, []fanout.Option{fanout.WithSortedMerge(func(a, b *listv1.ListRequest) int { return 0 })}, "WithSortedMerge"},
		// A nil function is a typed nil in the option: accepted, the merge
		// would silently not be sorted, or not deduplicated.
		{"cmp=nil", []fanout.Backend{{Name: "a", Conn: conn}}, []fanout.Option{fanout.WithSortedMerge[listv1.ListResponse](nil)}, "WithSortedMerge's function is nil"},
		{"equal=nil", []fanout.Backend{{Name: "a", Conn: conn}}, []fanout.Option{fanout.WithSortedMerge(byString), fanout.WithDedup[listv1.ListResponse](nil, nil)}, "WithDedup's equal is nil"},
		{"dedup-without-sort", []fanout.Backend{{Name: "a", Conn: conn}}, []fanout.Option{fanout.WithDedup(sameString, nil)}, "needs WithSortedMerge"},
		{"equal-of-another-type", []fanout.Backend{{Name: "a", Conn: conn}}, []fanout.Option{fanout.WithSortedMerge(byString), fanout.WithDedup(func(a, b *listv1.ListRequest) bool { return true }, nil)}, "WithDedup's equal"},
		// A later WithDedup replaces an earlier one whole, merge included.
		{"later-dedup-of-another-type", []fanout.Backend{{Name: "a", Conn: conn}}, []fanout.Option{fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, func(kept, next *listv1.ListResponse) *listv1.ListResponse { return kept }), fanout.WithDedup(func(a, b *listv1.ListRequest) bool { return true }, nil)}, "WithDedup's equal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fanout.New(open, tc.backends, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestOpenFuncWithoutStream(t *testing.T) {
	none := func(context.Context, grpc.ClientConnInterface, *listv1.ListRequest) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
		return nil, nil
	}
	p, err := fanout.New(none, []fanout.Backend{{Name: "a", Conn: channel(t, &lister{})}})
	if err != nil {
		t.Fatal(err)
	}
	_, errs := collect(t, p)
	if len(errs) != 1 || status.Code(errs[0]) != codes.Internal {
		t.Errorf("errors %v, want Internal: the OpenFunc returned neither a stream nor an error", errs)
	}
}
