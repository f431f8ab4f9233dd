package listproxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/localgrpc/localgrpc"
	"github.com/localgrpc/localgrpc/cmd/examples/listproxy"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// sortedList is a ListStrings backend: it sends its messages, each a batch
// of strings, in order.
type sortedList struct {
	listv1.UnimplementedListStringsServer
	messages [][]string
}

func (s sortedList) List(_ *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	for _, m := range s.messages {
		if err := stream.Send(&listv1.ListResponse{Strings: m}); err != nil {
			return err
		}
	}
	return nil
}

// A proxy in front of three backends, one in the process, one behind a
// unix socket, one on TCP, each batching its sorted strings its own way,
// is served on every kind of address; through each, a client gets the
// sorted union of the backends' strings, each once, three to a message.
func Example() {
	dir, err := os.MkdirTemp("", "listproxy-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var served []chan error
	serve := func(srv *localgrpc.Server, addrs ...string) []string {
		if err := srv.Listen(addrs...); err != nil {
			log.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx) }()
		served = append(served, done)
		return srv.Addrs()
	}
	backend := func(addr string, messages ...[]string) string {
		srv := localgrpc.NewServer()
		listv1.RegisterListStringsServer(srv, sortedList{messages: messages})
		return serve(srv, addr)[0]
	}
	backends := []string{
		backend("inproc:listproxy-example-backend", []string{"apple", "cherry"}, []string{"fig"}),
		backend("unix:"+filepath.Join(dir, "backend.sock"), []string{"banana", "cherry", "date"}),
		backend("127.0.0.1:0", []string{"apple"}, []string{"banana"}, []string{"elder", "fig"}),
	}

	proxy, err := listproxy.Dial(backends, listproxy.WithBatchLimits(3, 1<<20))
	if err != nil {
		log.Fatal(err)
	}
	srv := localgrpc.NewServer()
	listv1.RegisterListStringsServer(srv, proxy)
	addrs := serve(srv, "inproc:listproxy-example", "unix:"+filepath.Join(dir, "proxy.sock"),
		fmt.Sprintf("unix:@listproxy-example-%d", os.Getpid()), "127.0.0.1:0")

	for _, addr := range addrs {
		cc, err := localgrpc.NewClient(addr)
		if err != nil {
			log.Fatal(err)
		}
		stream, err := listv1.NewListStringsClient(cc).List(ctx, &listv1.ListRequest{})
		if err != nil {
			log.Fatal(err)
		}
		a, _ := localgrpc.ParseAddress(addr)
		fmt.Print(a.Kind)
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				log.Fatal(err)
			}
			fmt.Print(" ", resp.GetStrings())
		}
		fmt.Println()
		cc.Close()
	}

	stop()
	for _, done := range served {
		if err := <-done; err != nil {
			log.Fatal(err)
		}
	}
	proxy.Close()
	// Output:
	// inproc [apple banana cherry] [date elder fig]
	// unix [apple banana cherry] [date elder fig]
	// abstract [apple banana cherry] [date elder fig]
	// tcp [apple banana cherry] [date elder fig]
}
