package fanout_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/localgrpc/localgrpc/fanout"
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
