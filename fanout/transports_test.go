package fanout_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
)

// socketBackend serves srv on addr with a localgrpc.Server until the test
// ends and returns a Backend that reaches it through localgrpc.NewClient.
func socketBackend(t *testing.T, name, shard, addr string, srv listv1.ListStringsServer) fanout.Backend {
	t.Helper()
	s := localgrpc.NewServer()
	listv1.RegisterListStringsServer(s, srv)
	servertest.Serve(t, s, addr)
	cc, err := localgrpc.NewClient(s.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return fanout.Backend{Name: name, Shard: shard, Conn: cc}
}

// modeBackend is an inproc.Channel in the given modes serving srv.
func modeBackend(t *testing.T, name, shard string, copy inproc.CopyMode, exec inproc.Execution, srv listv1.ListStringsServer) fanout.Backend {
	ch := inproc.New(inproc.WithCopy(copy), inproc.WithExecution(exec))
	t.Cleanup(ch.Stop)
	listv1.RegisterListStringsServer(ch, srv)
	return fanout.Backend{Name: name, Shard: shard, Conn: ch}
}

func TestEveryTransportMixed(t *testing.T) {
	// Each backend holds its own strings and "shared", which the merge
	// must keep once.
	strs := func(name string) *lister {
		s := []string{name + "-1", name + "-2", "shared"}
		slices.Sort(s) // each backend's stream is sorted
		return &lister{strings: s}
	}
	dir := t.TempDir()
	abstract := fmt.Sprintf("unix-abstract:fanout-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	var backends []fanout.Backend
	var want []string
	for _, copy := range []inproc.CopyMode{inproc.Clone, inproc.Share} {
		for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
			name := fmt.Sprintf("inproc-%v-%v", copy, exec)
			backends = append(backends, modeBackend(t, name, name, copy, exec, strs(name)))
			want = append(want, name+"-1", name+"-2")
		}
	}
	for name, addr := range map[string]string{
		"unix":     "unix:" + filepath.Join(dir, "b.sock"),
		"abstract": abstract,
		"tcp":      "127.0.0.1:0",
		"inproc":   fmt.Sprintf("inproc:fanout-test-%d", time.Now().UnixNano()),
	} {
		backends = append(backends, socketBackend(t, name, name, addr, strs(name)))
		want = append(want, name+"-1", name+"-2")
	}
	want = append(want, "shared")
	slices.Sort(want)
	p, err := fanout.New(open, backends, fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, nil))
	if err != nil {
		t.Fatal(err)
	}
	got, errs := collect(t, p)
	if !slices.Equal(got, want) || errs != nil {
		t.Errorf("got %q, %v\nwant %q", got, errs, want)
	}
}

func TestHedgeAcrossTransports(t *testing.T) {
	// A shard whose replica on a unix socket stalls is answered by its
	// in-process replica, and the socket call is cancelled.
	stalled := newReplica("unix", blocks)
	backends := []fanout.Backend{
		socketBackend(t, "unix", "s", "unix:"+filepath.Join(t.TempDir(), "s.sock"), stalled),
		modeBackend(t, "inproc", "s", inproc.Clone, inproc.Isolated, newReplica("inproc", nil)),
	}
	p, err := fanout.New(open, backends, fanout.WithHedging(fanout.Hedging{Delay: 100 * time.Millisecond, Budget: 1}))
	if err != nil {
		t.Fatal(err)
	}
	got, errs := collect(t, p)
	if !slices.Equal(got, []string{"inproc"}) || errs != nil {
		t.Fatalf("got %q, %v; want the in-process replica's answer", got, errs)
	}
	if s := stats(p, "unix"); s.Cancelled != 1 {
		t.Errorf("unix: %+v; want its call cancelled", s)
	}
	waitFor(t, "the unix handler to see its call cancelled", func() bool { return stalled.cancelled.Load() == 1 })
}
