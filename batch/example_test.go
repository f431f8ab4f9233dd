package batch_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/localgrpc/localgrpc/batch"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// numbers is a ListStrings server that sends 150 strings in batches.
type numbers struct {
	listv1.UnimplementedListStringsServer
}

func (numbers) List(_ *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	add := batch.Appender(func(m *listv1.ListResponse) *[]string { return &m.Strings }, 64)
	s := batch.NewSender(stream.Send, add, batch.MaxItems(64), batch.MaxAge(10*time.Millisecond))
	for i := range 150 {
		if err := s.Add(fmt.Sprint(i)); err != nil {
			return err
		}
	}
	return s.Flush()
}

// A server sends its strings 64 to a message; the client reads them one
// by one.
func Example() {
	ch := inproc.New()
	defer ch.Stop()
	listv1.RegisterListStringsServer(ch, numbers{})

	stream, err := listv1.NewListStringsClient(ch).List(context.Background(), &listv1.ListRequest{})
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for s, err := range batch.Items(stream, func(m *listv1.ListResponse) []string { return m.Strings }) {
		if err != nil {
			log.Fatal(err)
		}
		if n == 0 || n == 149 {
			fmt.Println(s)
		}
		n++
	}
	fmt.Println(n, "strings")
	// Output:
	// 0
	// 149
	// 150 strings
}
