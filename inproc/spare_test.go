package inproc

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/localgrpc/localgrpc/echo"
	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// listN is a ListStrings server that sends n messages of one string.
type listN struct {
	listv1.UnimplementedListStringsServer
	n int
}

func (l *listN) List(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	m := &listv1.ListResponse{}
	for i := range l.n {
		m.Strings = append(m.Strings[:0], fmt.Sprint(i))
		if err := s.Send(m); err != nil {
			return err
		}
	}
	return nil
}

// TestStreamRetiresItsSpare: with Clone, a stream whose receiver took its
// last message holds no spare copies, in either direction: they went back
// for other streams. The stream is long enough for a Spare's ring.
func TestStreamRetiresItsSpare(t *testing.T) {
	for _, e := range []Execution{Isolated, Inline} {
		t.Run(fmt.Sprint(e), func(t *testing.T) {
			ch := New(WithCopy(Clone), WithExecution(e))
			t.Cleanup(ch.Stop)
			const n = 1000
			listv1.RegisterListStringsServer(ch, &listN{n: n})
			cs, err := ch.NewStream(context.Background(), &listv1.ListStrings_ServiceDesc.Streams[0], listv1.ListStrings_List_FullMethodName)
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg(&listv1.ListRequest{}); err != nil {
				t.Fatal(err)
			}
			got := 0
			for {
				m := &listv1.ListResponse{}
				if err := cs.RecvMsg(m); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprint(got); len(m.Strings) != 1 || m.Strings[0] != want {
					t.Fatalf("message %d is %v", got, m.Strings)
				}
				got++
			}
			if got != n {
				t.Fatalf("got %d messages, want %d", got, n)
			}
			s := (*stream)(cs.(*clientStream))
			if l := s.toClient.spare.Len(); l != 0 {
				t.Errorf("the responses' Spare holds %d copies after the last", l)
			}
			if l := s.toServer.spare.Len(); l != 0 {
				t.Errorf("the requests' Spare holds %d copies after the last", l)
			}
		})
	}
}

// TestStreamRetiresItsSpareOneResponse: the same for a stream with one
// response (client streaming), whose client takes the response only once
// it found the stream's end behind it: the response's copy, handed back
// after that, goes back for other streams too.
func TestStreamRetiresItsSpareOneResponse(t *testing.T) {
	for _, e := range []Execution{Isolated, Inline} {
		t.Run(fmt.Sprint(e), func(t *testing.T) {
			ch := New(WithCopy(Clone), WithExecution(e))
			t.Cleanup(ch.Stop)
			echov1.RegisterEchoServer(ch, echo.Server{})
			desc := &echov1.Echo_ServiceDesc.Streams[1]
			if !desc.ClientStreams || desc.ServerStreams {
				t.Fatalf("%s is not client streaming", desc.StreamName)
			}
			cs, err := ch.NewStream(context.Background(), desc, echov1.Echo_Collect_FullMethodName)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := cs.SendMsg(&echov1.EchoRequest{Text: fmt.Sprint(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := cs.CloseSend(); err != nil {
				t.Fatal(err)
			}
			if err := cs.RecvMsg(&echov1.EchoResponse{}); err != nil {
				t.Fatal(err)
			}
			s := (*stream)(cs.(*clientStream))
			if l := s.toClient.spare.Len(); l != 0 {
				t.Errorf("the response's Spare holds %d copies after it", l)
			}
			if l := s.toServer.spare.Len(); l != 0 {
				t.Errorf("the requests' Spare holds %d copies after the last", l)
			}
		})
	}
}
