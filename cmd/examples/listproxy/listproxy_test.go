package listproxy_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/listproxy"
	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// waitLimit bounds every wait of these tests.
const waitLimit = servertest.WaitLimit

// lister is a ListStrings backend: it sends its messages, then, if ended
// is not nil, waits for its call's context to end and says so on ended,
// then ends the call with end.
type lister struct {
	listv1.UnimplementedListStringsServer
	messages [][]string
	end      error
	ended    chan struct{}

	mu    sync.Mutex
	peers []*peer.Peer // of every call, in order
}

func (l *lister) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	if p, ok := peer.FromContext(s.Context()); ok {
		l.mu.Lock()
		l.peers = append(l.peers, p)
		l.mu.Unlock()
	}
	for _, m := range l.messages {
		if err := s.Send(&listv1.ListResponse{Strings: m}); err != nil {
			return err
		}
	}
	if l.ended != nil {
		<-s.Context().Done()
		l.ended <- struct{}{}
		return s.Context().Err()
	}
	return l.end
}

func (l *lister) calls() []*peer.Peer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.peers)
}

// serveLister serves l on addr until the test ends, and returns the
// address it listens on.
func serveLister(t *testing.T, l *lister, addr string) string {
	t.Helper()
	srv := localgrpc.NewServer()
	listv1.RegisterListStringsServer(srv, l)
	servertest.Serve(t, srv, addr)
	return srv.Addrs()[0]
}

// serveProxy serves p on addrs until the test ends, and returns the server
// and the addresses it listens on.
func serveProxy(t *testing.T, p *listproxy.Server, addrs ...string) (*localgrpc.Server, []string) {
	t.Helper()
	srv := localgrpc.NewServer()
	listv1.RegisterListStringsServer(srv, p)
	servertest.Serve(t, srv, addrs...)
	return srv, srv.Addrs()
}

// dialProxy is Dial's proxy of addrs, closed when the test ends.
func dialProxy(t *testing.T, addrs []string, opts ...listproxy.Option) *listproxy.Server {
	t.Helper()
	p, err := listproxy.Dial(addrs, opts...)
	if err != nil {
		t.Fatalf("Dial(%q): %v", addrs, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// everyKind is an address of each kind a localgrpc.Server listens on.
func everyKind(t *testing.T) []string {
	return []string{"inproc:" + servertest.UniqueName(), "unix:" + servertest.SocketPath(t), "unix:@" + servertest.UniqueName(), "127.0.0.1:0"}
}

// list calls List on the server at addr and returns the messages it
// received and the status the call ended with.
func list(t *testing.T, addr string) ([][]string, error) {
	t.Helper()
	cc, err := localgrpc.NewClient(addr)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", addr, err)
	}
	defer cc.Close()
	stream, err := listv1.NewListStringsClient(cc).List(servertest.TimeoutCtx(t), &listv1.ListRequest{})
	if err != nil {
		return nil, err
	}
	var msgs [][]string
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, resp.GetStrings())
	}
}

// checkBatches fails unless msgs hold want in order, each message within
// the limits and full: the next string would not have fitted.
func checkBatches(t *testing.T, msgs [][]string, want []string, maxStrings, maxBytes int) {
	t.Helper()
	if got := slices.Concat(msgs...); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i, m := range msgs {
		n := 0
		for _, s := range m {
			n += len(s)
		}
		switch {
		case len(m) == 0:
			t.Errorf("message %d is empty", i)
		case len(m) > maxStrings || n > maxBytes && len(m) > 1:
			t.Errorf("message %d, %q, has %d strings of %d bytes: over the limits %d and %d", i, m, len(m), n, maxStrings, maxBytes)
		case i < len(msgs)-1 && len(m) < maxStrings && n+len(msgs[i+1][0]) <= maxBytes:
			t.Errorf("message %d, %q, was sent before it was full: %q fitted", i, m, msgs[i+1][0])
		}
	}
}

// The backends of these tests: each sorted, batched its own way, with a
// duplicate inside one backend, an empty message, and strings that two or
// three backends hold.
var (
	inprocStrings = [][]string{{"apple", "cherry"}, {"fig"}, {}, {"kiwi"}}
	unixStrings   = [][]string{{"banana", "cherry", "date", "fig", "fig"}}
	tcpStrings    = [][]string{{"apple"}, {"banana"}, {"elder"}, {"grape", "kiwi", "lemon"}}
	union         = []string{"apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi", "lemon"}
)

// mixedBackends serves the three backends, in-process, on a unix socket
// and on TCP, and returns their addresses.
func mixedBackends(t *testing.T) []string {
	return []string{
		serveLister(t, &lister{messages: inprocStrings}, "inproc:"+servertest.UniqueName()),
		serveLister(t, &lister{messages: unixStrings}, "unix:"+servertest.SocketPath(t)),
		serveLister(t, &lister{messages: tcpStrings}, "127.0.0.1:0"),
	}
}

func TestProxyOnEveryTransport(t *testing.T) {
	p := dialProxy(t, mixedBackends(t), listproxy.WithBatchLimits(4, 1<<20))
	_, addrs := serveProxy(t, p, everyKind(t)...)
	for _, addr := range addrs {
		t.Run(servertest.TransportName(addr), func(t *testing.T) {
			msgs, err := list(t, addr)
			if err != nil {
				t.Fatalf("List: %v after %q", err, msgs)
			}
			want := [][]string{{"apple", "banana", "cherry", "date"}, {"elder", "fig", "grape", "kiwi"}, {"lemon"}}
			if !slices.EqualFunc(msgs, want, slices.Equal) {
				t.Errorf("got %q, want %q", msgs, want)
			}
		})
	}
}

func TestBatchLimits(t *testing.T) {
	backends := mixedBackends(t)
	cases := []struct {
		name                 string
		maxStrings, maxBytes int
	}{
		{"strings=1", 1, 1 << 20},
		{"strings=4", 4, 1 << 20},
		{"bytes=10", 100, 10},
		{"bytes=1", 100, 1}, // every string is longer: each goes alone
		{"default", listproxy.DefaultMaxStrings, listproxy.DefaultMaxBytes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []listproxy.Option
			if tc.name != "default" {
				opts = append(opts, listproxy.WithBatchLimits(tc.maxStrings, tc.maxBytes))
			}
			_, addrs := serveProxy(t, dialProxy(t, backends, opts...), "inproc:"+servertest.UniqueName())
			msgs, err := list(t, addrs[0])
			if err != nil {
				t.Fatalf("List: %v after %q", err, msgs)
			}
			checkBatches(t, msgs, union, tc.maxStrings, tc.maxBytes)
		})
	}
}

// A backend that fails ends the client's call with its status, after the
// strings of the others: under Warn all of them, and the failed backend's
// strings from before its failure.
func TestFailingBackend(t *testing.T) {
	down := status.Error(codes.Unavailable, "backend down")
	cases := []struct {
		name     string
		bad      *lister
		twice    bool // two backends serve bad
		policy   fanout.PartialResponse
		want     []string // under Warn: exactly these
		wantCode codes.Code
		wantMsg  string
	}{
		{"fail=before-first/policy=warn", &lister{end: down}, false, fanout.Warn,
			union, codes.Unavailable, "Unavailable: backend down"},
		{"fail=mid-stream/policy=warn", &lister{messages: [][]string{{"b", "d"}, {"kiwi", "m"}}, end: down}, false, fanout.Warn,
			[]string{"apple", "b", "banana", "cherry", "d", "date", "elder", "fig", "grape", "kiwi", "lemon", "m"}, codes.Unavailable, "Unavailable: backend down"},
		{"fail=unsorted/policy=warn", &lister{messages: [][]string{{"b", "d"}, {"c", "z"}}}, false, fanout.Warn,
			[]string{"apple", "b", "banana", "cherry", "d", "date", "elder", "fig", "grape", "kiwi", "lemon"}, codes.Internal, `sent "c" after "d"`},
		{"fail=two-backends/policy=warn", &lister{messages: [][]string{{"b"}}, end: down}, true, fanout.Warn,
			[]string{"apple", "b", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi", "lemon"}, codes.Unavailable, "2 backend(s) failed"},
		{"fail=mid-stream/policy=abort", &lister{messages: [][]string{{"b"}}, end: down}, false, fanout.Abort,
			nil, codes.Unavailable, "Unavailable: backend down"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := []string{serveLister(t, tc.bad, "127.0.0.1:0")}
			if tc.twice {
				bad = append(bad, serveLister(t, tc.bad, "unix:"+servertest.SocketPath(t)))
			}
			backends := append(mixedBackends(t), bad...)
			p := dialProxy(t, backends, listproxy.WithBatchLimits(3, 1<<20), listproxy.WithFanoutOptions(fanout.WithPartialResponse(tc.policy)))
			_, addrs := serveProxy(t, p, "unix:@"+servertest.UniqueName())
			msgs, err := list(t, addrs[0])
			got := slices.Concat(msgs...)
			st := status.Convert(err)
			if st.Code() != tc.wantCode || !strings.Contains(st.Message(), tc.wantMsg) {
				t.Errorf("the call ended with %v; want %v saying %q", err, tc.wantCode, tc.wantMsg)
			}
			for _, b := range bad {
				if !strings.Contains(st.Message(), `backend "`+b+`": `) {
					t.Errorf("the call ended with %v, which does not name the failed backend %q", err, b)
				}
			}
			if tc.policy == fanout.Warn {
				checkBatches(t, msgs, tc.want, 3, 1<<20)
				return
			}
			// Under Abort, what came before the failure is sorted, once.
			if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Errorf("got %q before the failure, want sorted strings, each once", got)
			}
		})
	}
}

// A client that cancels mid-stream ends every backend call and the
// proxy's handler; once the servers have stopped, no goroutine is left.
func TestClientCancelMidStream(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Run("cancel", func(t *testing.T) {
		// Each backend sends one message, then waits for its call to end.
		holders := []*lister{
			{messages: [][]string{{"a", "d"}}, ended: make(chan struct{}, 8)},
			{messages: [][]string{{"b"}}, ended: make(chan struct{}, 8)},
			{messages: [][]string{{"c"}}, ended: make(chan struct{}, 8)},
		}
		backends := []string{
			serveLister(t, holders[0], "inproc:"+servertest.UniqueName()),
			serveLister(t, holders[1], "unix:"+servertest.SocketPath(t)),
			serveLister(t, holders[2], "127.0.0.1:0"),
		}
		p := dialProxy(t, backends, listproxy.WithBatchLimits(1, 1<<20))
		proxySrv, addrs := serveProxy(t, p, everyKind(t)...)
		for _, addr := range addrs {
			t.Run(servertest.TransportName(addr), func(t *testing.T) {
				cc, err := localgrpc.NewClient(addr)
				if err != nil {
					t.Fatal(err)
				}
				defer cc.Close()
				ctx, cancel := context.WithCancel(servertest.TimeoutCtx(t))
				defer cancel()
				stream, err := listv1.NewListStringsClient(cc).List(ctx, &listv1.ListRequest{})
				if err != nil {
					t.Fatal(err)
				}
				// Only "a" goes out: the merge then reads on in the first
				// backend, which holds.
				resp, err := stream.Recv()
				if err != nil || !slices.Equal(resp.GetStrings(), []string{"a"}) {
					t.Fatalf("first response %q, %v; want [a]", resp.GetStrings(), err)
				}
				cancel()
				for {
					if _, err = stream.Recv(); err != nil {
						break
					}
				}
				if status.Code(err) != codes.Canceled {
					t.Errorf("after cancel the stream ended with %v, want Canceled", err)
				}
				for i, h := range holders {
					select {
					case <-h.ended:
					case <-time.After(waitLimit):
						t.Fatalf("backend %d's call did not end when the client cancelled", i)
					}
				}
			})
		}
		// The proxy's handlers have returned: a graceful stop, which waits
		// for them, ends.
		stopped := make(chan struct{})
		go func() { proxySrv.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(waitLimit):
			t.Fatal("the proxy's handler is still running after its client cancelled")
		}
	})
	goleak.VerifyNone(t, before)
}

func TestConstructorsRefuse(t *testing.T) {
	ch := inproc.New()
	t.Cleanup(ch.Stop)
	good := serveLister(t, &lister{}, "unix:@"+servertest.UniqueName())
	cases := []struct {
		name string
		new  func() (*listproxy.Server, error)
		want string
	}{
		{"dial/no-address", func() (*listproxy.Server, error) { return listproxy.Dial(nil) }, "at least one address"},
		{"dial/bad-address", func() (*listproxy.Server, error) { return listproxy.Dial([]string{good, "no-port"}) }, `"no-port"`},
		{"dial/twice", func() (*listproxy.Server, error) { return listproxy.Dial([]string{good, good}) }, "given twice"},
		{"dial/zero-strings", func() (*listproxy.Server, error) {
			return listproxy.Dial([]string{good}, listproxy.WithBatchLimits(0, 10))
		}, "WithBatchLimits(0, 10)"},
		{"new/no-backend", func() (*listproxy.Server, error) { return listproxy.New(nil) }, "at least one backend"},
		{"new/no-name", func() (*listproxy.Server, error) { return listproxy.New([]fanout.Backend{{Conn: ch}}) }, "no Name"},
		{"new/zero-bytes", func() (*listproxy.Server, error) {
			return listproxy.New([]fanout.Backend{{Name: "a", Conn: ch}}, listproxy.WithBatchLimits(1, 0))
		}, "WithBatchLimits(1, 0)"},
		{"new/client-options", func() (*listproxy.Server, error) {
			return listproxy.New([]fanout.Backend{{Name: "a", Conn: ch}}, listproxy.WithClientOptions())
		}, "WithClientOptions is for Dial"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.new()
			if err == nil {
				p.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "listproxy: ") {
				t.Errorf("got %v, want an error of listproxy saying %s", err, tc.want)
			}
		})
	}
}

// New takes connections of the caller's, here in-process channels, with
// the replicas of a shard called in turn.
func TestNewWithReplicas(t *testing.T) {
	channel := func(l *lister) *inproc.Channel {
		ch := inproc.New()
		t.Cleanup(ch.Stop)
		listv1.RegisterListStringsServer(ch, l)
		return ch
	}
	r1, r2 := &lister{messages: [][]string{{"a", "c"}}}, &lister{messages: [][]string{{"a", "c"}}}
	p, err := listproxy.New([]fanout.Backend{
		{Name: "r1", Shard: "r", Conn: channel(r1)},
		{Name: "r2", Shard: "r", Conn: channel(r2)},
		{Name: "other", Conn: channel(&lister{messages: [][]string{{"b", "c", "d"}}})},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, addrs := serveProxy(t, p, "inproc:"+servertest.UniqueName())
	for range 2 {
		msgs, err := list(t, addrs[0])
		if want := []string{"a", "b", "c", "d"}; err != nil || !slices.Equal(slices.Concat(msgs...), want) {
			t.Errorf("got %q, %v; want %q", msgs, err, want)
		}
	}
	if n1, n2 := len(r1.calls()), len(r2.calls()); n1 != 1 || n2 != 1 {
		t.Errorf("two calls reached replica r1 %d and r2 %d times, want once each", n1, n2)
	}
}
