package batch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/batch"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/servertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// batches is a Receiver of given batches, then of err (io.EOF if nil).
type batches struct {
	left []*listv1.ListResponse
	err  error
}

func (b *batches) Recv() (*listv1.ListResponse, error) {
	if len(b.left) == 0 {
		if b.err == nil {
			return nil, io.EOF
		}
		return nil, b.err
	}
	m := b.left[0]
	b.left = b.left[1:]
	return m, nil
}

func stringsOf(m *listv1.ListResponse) []string { return m.Strings }

func TestItems(t *testing.T) {
	in := &batches{left: []*listv1.ListResponse{{Strings: []string{"a", "b"}}, {}, {Strings: []string{"c"}}}}
	var got []string
	for s, err := range batch.Items(in, stringsOf) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("items %q, want a b c", got)
	}
	failure := errors.New("broken")
	in = &batches{left: []*listv1.ListResponse{{Strings: []string{"a"}}}, err: failure}
	var errs []error
	for _, err := range batch.Items(in, stringsOf) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || errs[0] != failure {
		t.Errorf("errors %v, want the stream's one", errs)
	}
	// Breaking out stops reading.
	in = &batches{left: []*listv1.ListResponse{{Strings: []string{"a", "b"}}, {Strings: []string{"c"}}}}
	for range batch.Items(in, stringsOf) {
		break
	}
	if len(in.left) != 1 {
		t.Errorf("%d batches left after a break at the first item, want the second unread", len(in.left))
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

// TestItemsErrorOnceAndBreak: Items yields a non-EOF error once and
// ends, and a break mid-batch does not Recv again.
func TestItemsErrorOnceAndBreak(t *testing.T) {
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

// batchingLister streams n strings in batches made by a batch.Sender.
type batchingLister struct {
	listv1.UnimplementedListStringsServer
	n int
}

func (l batchingLister) List(_ *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	s := batch.NewSender(stream.Send, func(m *listv1.ListResponse, s string) { m.Strings = append(m.Strings, s) },
		batch.MaxItems(64), batch.MaxBytes(4<<10), batch.ItemSize(func(s string) int { return len(s) }), batch.MaxAge(time.Millisecond))
	defer s.Close()
	for i := range l.n {
		if err := s.Add(fmt.Sprintf("item-%06d", i)); err != nil {
			return err
		}
	}
	return s.Flush()
}

func TestEveryTransport(t *testing.T) {
	const n = 10_000
	conns := map[string]grpc.ClientConnInterface{}
	for _, copy := range []inproc.CopyMode{inproc.Clone, inproc.Share} {
		for _, exec := range []inproc.Execution{inproc.Isolated, inproc.Inline} {
			ch := inproc.New(inproc.WithCopy(copy), inproc.WithExecution(exec))
			t.Cleanup(ch.Stop)
			listv1.RegisterListStringsServer(ch, batchingLister{n: n})
			conns[fmt.Sprintf("inproc-%v-%v", copy, exec)] = ch
		}
	}
	srv := localgrpc.NewServer()
	listv1.RegisterListStringsServer(srv, batchingLister{n: n})
	addrs := []string{"unix:" + filepath.Join(t.TempDir(), "s.sock"), "127.0.0.1:0",
		fmt.Sprintf("unix-abstract:batch-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	servertest.Serve(t, srv, addrs...)
	for _, addr := range srv.Addrs() {
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		conns[addr] = cc
	}
	for name, cc := range conns {
		t.Run("transport="+name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
			defer cancel()
			stream, err := listv1.NewListStringsClient(cc).List(ctx, &listv1.ListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for s, err := range batch.Items(stream, stringsOf) {
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("item-%06d", i); s != want {
					t.Fatalf("item %d is %q, want %q", i, s, want)
				}
				i++
			}
			if i != n {
				t.Errorf("%d items, want %d", i, n)
			}
		})
	}
	// A client that goes away fails the sender's next Add, which the
	// handler returns: nothing is sent after, and the sender stops.
	ctx, cancel := context.WithCancel(t.Context())
	stream, err := listv1.NewListStringsClient(conns[srv.Addrs()[0]]).List(ctx, &listv1.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	stream.Recv()
	cancel()
	for _, err := range batch.Items(stream, stringsOf) {
		if err != nil {
			if status.Code(err) != codes.Canceled {
				t.Errorf("after cancel: %v, want Canceled", err)
			}
			break
		}
	}
}
