package fanout_test

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/localgrpc/localgrpc/fanout"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// prebuilt is a ListStrings backend that sends responses built before the
// timer starts, so that a call measures only their way to the client, as the
// ListStrings workload of cmd/internal/bench does.
type prebuilt struct {
	listv1.UnimplementedListStringsServer
	resps []*listv1.ListResponse
}

func (p *prebuilt) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	for _, r := range p.resps {
		if err := s.Send(r); err != nil {
			return err
		}
	}
	return nil
}

// response is one message of strings of size bytes, each key followed by
// "/" and its index in the message, padded with x: the first string, and so
// the message, sorts by key.
func response(key string, strs, size int) *listv1.ListResponse {
	r := &listv1.ListResponse{Strings: make([]string, strs)}
	for i := range r.Strings {
		s := fmt.Sprintf("%s/%d", key, i)
		r.Strings[i] = s + strings.Repeat("x", max(size-len(s), 0))
	}
	return r
}

// backend serves srv on an in-process channel in Share and Isolated mode,
// the mode a proxy in front of backends of the same process would use,
// until b ends.
func backend(b *testing.B, srv listv1.ListStringsServer) *inproc.Channel {
	ch := inproc.New(inproc.WithCopy(inproc.Share), inproc.WithExecution(inproc.Isolated))
	listv1.RegisterListStringsServer(ch, srv)
	b.Cleanup(ch.Stop)
	return ch
}

// W1 of cmd/internal/bench: 10,000 strings of 100 bytes, 10 per message.
const (
	w1Strings    = 10_000
	w1StringSize = 100
	w1RespSize   = 10
)

// BenchmarkOverhead is what a Proxy costs over one backend: workload W1
// made directly with the generated client (via=direct), and through a proxy
// that merges as responses come (via=proxy) or in order (via=proxy-sorted).
// Compare with `benchstat -col /via`.
func BenchmarkOverhead(b *testing.B) {
	srv := &prebuilt{}
	for i := range w1Strings / w1RespSize {
		// Keys zero-padded so that the messages are sorted, for the
		// sorted merge.
		srv.resps = append(srv.resps, response(fmt.Sprintf("%08d", i), w1RespSize, w1StringSize))
	}
	ch := backend(b, srv)
	req := &listv1.ListRequest{}
	check := func(b *testing.B, n int, err error) {
		if err != nil || n != w1Strings {
			b.Fatalf("received %d strings, %v; want %d", n, err, w1Strings)
		}
	}

	b.Run("via=direct", func(b *testing.B) {
		client := listv1.NewListStringsClient(ch)
		b.ReportAllocs()
		for b.Loop() {
			n, err := drain(b.Context(), client, req)
			check(b, n, err)
		}
	})
	for _, via := range []struct {
		name string
		opts []fanout.Option
	}{
		{"proxy", nil},
		{"proxy-sorted", []fanout.Option{fanout.WithSortedMerge(byString)}},
	} {
		b.Run("via="+via.name, func(b *testing.B) {
			p, err := fanout.New(open, []fanout.Backend{{Name: "one", Conn: ch}}, via.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				n, err := drainProxy(b.Context(), p, req)
				check(b, n, err)
			}
		})
	}
}

// drain makes one List call with the generated client and counts the
// strings it receives.
func drain(ctx context.Context, c listv1.ListStringsClient, req *listv1.ListRequest) (int, error) {
	stream, err := c.List(ctx, req)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += len(resp.Strings)
	}
}

// drainProxy runs one Stream of p and counts the strings it yields.
func drainProxy(ctx context.Context, p *fanout.Proxy[listv1.ListRequest, listv1.ListResponse], req *listv1.ListRequest) (int, error) {
	n := 0
	for resp, err := range p.Stream(ctx, req) {
		if err != nil {
			return n, err
		}
		n += len(resp.Strings)
	}
	return n, nil
}

// The merge workload: mergeBackends backends of mergeResps sorted messages
// each, every fourth message of an odd backend the same as its even
// neighbour's, so that a quarter of the odd backends' messages (an eighth
// of all) are dropped as duplicates.
const (
	mergeBackends = 16
	mergeResps    = 1000
	mergeUnique   = mergeBackends*mergeResps - mergeBackends/2*mergeResps/4
)

// mergeServers returns the backends' servers, whose messages hold
// respSize strings of W1's size. Backend b's message j has the key
// j*16+b, or, when it is a copy, its neighbour's key j*16+b-1, so every
// backend's stream is sorted and the merge takes from each in turn.
func mergeServers(respSize int) []*prebuilt {
	srvs := make([]*prebuilt, mergeBackends)
	for b := range srvs {
		srvs[b] = &prebuilt{}
	}
	for j := range mergeResps {
		for b, srv := range srvs {
			key := j*mergeBackends + b
			if b%2 == 1 && j%4 == 0 {
				key-- // a copy of the neighbour's, as another message
			}
			srv.resps = append(srv.resps, response(fmt.Sprintf("%08d", key), respSize, w1StringSize))
		}
	}
	return srvs
}

// BenchmarkMerge merges mergeBackends in-process backends' sorted streams
// and drops the duplicates, through thanosMerge, the way Thanos's
// ProxyStore did it before its loser tree, and through a Proxy (a loser
// tree pulling each call on the consumer's goroutine). Messages hold one string, where
// the merge's own cost shows most, or ten, as W1's do, where the backends'
// sending weighs more. cpu-ns/op is the process's CPU time per op: with
// the backends on goroutines of their own, an op can take less time than
// CPU. Compare with `benchstat -col /impl`.
func BenchmarkMerge(b *testing.B) {
	for _, respSize := range []int{1, w1RespSize} {
		srvs := mergeServers(respSize)
		backends := make([]fanout.Backend, len(srvs))
		conns := make([]grpc.ClientConnInterface, len(srvs))
		for i, srv := range srvs {
			conns[i] = backend(b, srv)
			backends[i] = fanout.Backend{Name: fmt.Sprint("b", i), Conn: conns[i]}
		}
		p, err := fanout.New(open, backends, fanout.WithSortedMerge(byString), fanout.WithDedup(sameString, nil))
		if err != nil {
			b.Fatal(err)
		}
		req := &listv1.ListRequest{}
		impls := []struct {
			name  string
			merge func(ctx context.Context, yield func(*listv1.ListResponse)) error
		}{
			{"thanos-heap", func(ctx context.Context, yield func(*listv1.ListResponse)) error {
				return thanosMerge(ctx, conns, req, yield)
			}},
			{"proxy", func(ctx context.Context, yield func(*listv1.ListResponse)) error {
				for resp, err := range p.Stream(ctx, req) {
					if err != nil {
						return err
					}
					yield(resp)
				}
				return nil
			}},
		}
		for _, im := range impls {
			b.Run(fmt.Sprintf("backends=%d/respSize=%d/impl=%s", mergeBackends, respSize, im.name), func(b *testing.B) {
				b.ReportAllocs()
				start := cpuTime(b)
				for b.Loop() {
					n, prev := 0, ""
					err := im.merge(b.Context(), func(resp *listv1.ListResponse) {
						if resp.Strings[0] <= prev {
							b.Fatalf("%q after %q", resp.Strings[0], prev)
						}
						prev = resp.Strings[0]
						n++
					})
					if err != nil || n != mergeUnique {
						b.Fatalf("merged %d messages, %v; want %d", n, err, mergeUnique)
					}
				}
				b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime is the user and system time this process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// thanosRecvBuffer is the buffer of each backend's channel in thanosMerge:
// Thanos's streamSeriesSet received into make(chan *storepb.Series, 10).
const thanosRecvBuffer = 10

// thanosMerge is the baseline of BenchmarkMerge, Thanos's ProxyStore before
// its loser tree (pkg/store/proxy.go): every backend's call is opened, then
// drained by a goroutine of its own into a buffered channel, and the
// consumer merges the channels' heads in a container/heap, yielding each
// message unless it equals the one before. Errors end the merge.
func thanosMerge(ctx context.Context, conns []grpc.ClientConnInterface, req *listv1.ListRequest, yield func(*listv1.ListResponse)) error {
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: no goroutine outlives the merge
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	recvs := make([]chan *listv1.ListResponse, len(conns))
	errs := make([]error, len(conns))
	for i, cc := range conns {
		stream, err := open(ctx, cc, req)
		if err != nil {
			return err
		}
		recv := make(chan *listv1.ListResponse, thanosRecvBuffer)
		recvs[i] = recv
		wg.Go(func() {
			defer close(recv)
			for {
				r, err := stream.Recv()
				if err == io.EOF {
					return
				}
				if err != nil {
					errs[i] = err
					return
				}
				select {
				case recv <- r:
				case <-ctx.Done():
					return
				}
			}
		})
	}

	h := &respHeap{}
	for i, recv := range recvs {
		if r, ok := <-recv; ok {
			h.items = append(h.items, headResp{r, i})
		}
	}
	heap.Init(h)
	var prev *listv1.ListResponse
	for h.Len() > 0 {
		top := &h.items[0]
		if prev == nil || !sameString(prev, top.r) {
			yield(top.r)
		}
		prev = top.r
		if r, ok := <-recvs[top.source]; ok {
			top.r = r
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	cancel()
	wg.Wait()
	return errors.Join(errs...)
}

// headResp is the head of one backend's channel in thanosMerge's heap.
type headResp struct {
	r      *listv1.ListResponse
	source int
}

// respHeap orders the heads by byString, ties going to the lower backend,
// as the proxy's stable merge does.
type respHeap struct{ items []headResp }

func (h *respHeap) Len() int { return len(h.items) }
func (h *respHeap) Less(i, j int) bool {
	if c := byString(h.items[i].r, h.items[j].r); c != 0 {
		return c < 0
	}
	return h.items[i].source < h.items[j].source
}
func (h *respHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *respHeap) Push(x any)    { h.items = append(h.items, x.(headResp)) }
func (h *respHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}
