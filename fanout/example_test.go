package fanout_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/fanout"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// sorted is a ListStrings backend that sends its strings in order, one per
// message.
type sorted struct {
	listv1.UnimplementedListStringsServer
	strings []string
}

func (s sorted) List(_ *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	for _, str := range s.strings {
		if err := stream.Send(&listv1.ListResponse{Strings: []string{str}}); err != nil {
			return err
		}
	}
	return nil
}

// A proxy over two shards, one with two replicas, merges their sorted
// streams into one and drops what both shards hold. The backends here are
// in-process; a localgrpc.NewClient connection to a socket or to another
// machine is a Backend's Conn the same way.
func Example() {
	backend := func(strs ...string) *inproc.Channel {
		ch := inproc.New()
		listv1.RegisterListStringsServer(ch, sorted{strings: strs})
		return ch
	}
	a1, a2, b := backend("apple", "cherry"), backend("apple", "cherry"), backend("banana", "cherry")
	defer a1.Stop()
	defer a2.Stop()
	defer b.Stop()

	open := func(ctx context.Context, cc grpc.ClientConnInterface, r *listv1.ListRequest) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
		return listv1.NewListStringsClient(cc).List(ctx, r)
	}
	p, err := fanout.New(open, []fanout.Backend{
		{Name: "a-1", Shard: "a", Conn: a1},
		{Name: "a-2", Shard: "a", Conn: a2},
		{Name: "b-1", Shard: "b", Conn: b},
	},
		fanout.WithSortedMerge(func(x, y *listv1.ListResponse) int { return strings.Compare(x.Strings[0], y.Strings[0]) }),
		fanout.WithDedup(func(x, y *listv1.ListResponse) bool { return x.Strings[0] == y.Strings[0] }, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	for resp, err := range p.Stream(context.Background(), &listv1.ListRequest{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(resp.Strings[0])
	}
	// Output:
	// apple
	// banana
	// cherry
}

// Backends at any address of localgrpc.NewClient: in-process names here,
// unix sockets or another machine's address (with transport credentials)
// the same way. The merge compares responses by a first key that an empty
// response has too.
func ExampleNew_addresses() {
	for name, strs := range map[string][]string{"a-1": {"apple", "cherry"}, "a-2": {"apple", "cherry"}, "b-1": {"banana", "cherry"}} {
		srv := localgrpc.NewServer()
		listv1.RegisterListStringsServer(srv, sorted{strings: strs})
		if err := srv.Listen("inproc:" + name); err != nil {
			log.Fatal(err)
		}
		go srv.Serve(context.Background())
		defer srv.Stop()
	}
	must := func(cc localgrpc.ClientConn, err error) localgrpc.ClientConn {
		if err != nil {
			log.Fatal(err)
		}
		return cc
	}

	open := func(ctx context.Context, cc grpc.ClientConnInterface, r *listv1.ListRequest) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
		return listv1.NewListStringsClient(cc).List(ctx, r)
	}
	a1 := must(localgrpc.NewClient("inproc:a-1")) // or "unix:/run/a-1.sock", "10.0.0.2:8080"
	a2 := must(localgrpc.NewClient("inproc:a-2"))
	b := must(localgrpc.NewClient("inproc:b-1"))
	defer a1.Close()
	defer a2.Close()
	defer b.Close()

	// Each backend sends its strings sorted, one per response: a sorted merge
	// places whole responses, so batched ones ([a c e], [b c d]) would come out
	// unsorted. Unbatch them first, or compare as WithSortedMerge says.
	first := func(r *listv1.ListResponse) string {
		if len(r.Strings) == 0 {
			return ""
		}
		return r.Strings[0]
	}
	p, err := fanout.New(open, []fanout.Backend{
		{Name: "a-1", Shard: "a", Conn: a1},
		{Name: "a-2", Shard: "a", Conn: a2},
		{Name: "b-1", Shard: "b", Conn: b},
	},
		fanout.WithSortedMerge(func(x, y *listv1.ListResponse) int { return strings.Compare(first(x), first(y)) }),
		fanout.WithDedup(func(x, y *listv1.ListResponse) bool { return first(x) == first(y) }, nil),
	)
	if err != nil {
		log.Fatal(err)
	}
	for resp, err := range p.Stream(context.Background(), &listv1.ListRequest{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(first(resp))
	}
	// Output:
	// apple
	// banana
	// cherry
}

// stalled is a ListStrings replica that never answers before its call is
// cancelled.
type stalled struct {
	listv1.UnimplementedListStringsServer
}

func (stalled) List(_ *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	<-stream.Context().Done()
	return stream.Context().Err()
}

// With hedging, a shard whose replica is slow to answer is asked again on
// another replica, and the first to answer wins.
func ExampleWithHedging() {
	stuck, healthy := inproc.New(), inproc.New()
	defer stuck.Stop()
	defer healthy.Stop()
	listv1.RegisterListStringsServer(stuck, stalled{})
	listv1.RegisterListStringsServer(healthy, sorted{strings: []string{"answer"}})

	open := func(ctx context.Context, cc grpc.ClientConnInterface, r *listv1.ListRequest) (grpc.ServerStreamingClient[listv1.ListResponse], error) {
		return listv1.NewListStringsClient(cc).List(ctx, r)
	}
	p, err := fanout.New(open, []fanout.Backend{
		{Name: "stuck", Shard: "a", Conn: stuck},
		{Name: "healthy", Shard: "a", Conn: healthy},
	}, fanout.WithHedging(fanout.Hedging{Delay: 10 * time.Millisecond, Budget: 1}))
	if err != nil {
		log.Fatal(err)
	}
	// The first call goes to stuck, and is hedged to healthy.
	for resp, err := range p.Stream(context.Background(), &listv1.ListRequest{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(resp.Strings[0])
	}
	for _, s := range p.Stats() {
		fmt.Printf("%s: %d call, %d hedge, %v %d cancelled\n", s.Backend, s.Calls, s.Hedges, s.Succeeded, s.Cancelled)
	}
	// Output:
	// answer
	// stuck: 1 call, 0 hedge, 0 1 cancelled
	// healthy: 1 call, 1 hedge, 1 0 cancelled
}

// A unary proxy gathers one response per shard.
func ExampleNewUnary() {
	backend := func(text string) *inproc.Channel {
		ch := inproc.New()
		echov1.RegisterEchoServer(ch, fixedEcho{text: text})
		return ch
	}
	a, b := backend("from a"), backend("from b")
	defer a.Stop()
	defer b.Stop()

	get := func(ctx context.Context, cc grpc.ClientConnInterface, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
		return echov1.NewEchoClient(cc).Get(ctx, r)
	}
	p, err := fanout.NewUnary(get, []fanout.Backend{{Name: "a", Conn: a}, {Name: "b", Conn: b}},
		fanout.WithSortedMerge(func(x, y *echov1.EchoResponse) int { return strings.Compare(x.Text, y.Text) }))
	if err != nil {
		log.Fatal(err)
	}
	resps, err := p.Gather(context.Background(), &echov1.EchoRequest{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range resps {
		fmt.Println(r.Text)
	}
	// Output:
	// from a
	// from b
}

// fixedEcho answers every Get with its text.
type fixedEcho struct {
	echov1.UnimplementedEchoServer
	text string
}

func (f fixedEcho) Get(context.Context, *echov1.EchoRequest) (*echov1.EchoResponse, error) {
	return &echov1.EchoResponse{Text: f.text}, nil
}
