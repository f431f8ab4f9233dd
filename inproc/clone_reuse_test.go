package inproc_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"google.golang.org/grpc"
)

// listFunc is a ListStrings server whose List is a function.
type listFunc struct {
	listv1.UnimplementedListStringsServer
	list func(*listv1.ListRequest, grpc.ServerStreamingServer[listv1.ListResponse]) error
}

func (l *listFunc) List(req *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
	return l.list(req, s)
}

// TestCloneReceivedMessagesStayTheReceivers checks, in every mode, that
// each message a stream's receiver got stays as it got it and as it then
// changed it, while the sender reuses one message for all it sends and
// more messages follow: with Clone, the copy a receiver took its message
// from is reused for a later one, which must not reach what it gave.
func TestCloneReceivedMessagesStayTheReceivers(t *testing.T) {
	const n = 300
	strs := func(i int) []string { return []string{fmt.Sprintf("m%d-0", i), fmt.Sprintf("m%d-1", i)} }
	forEachMode(t, func(t *testing.T, m testMode) {
		if isShare(t, m) {
			t.Skip("with Share the sender keeps its messages as they are, as gRPC's rule says")
		}
		ch := newChannel(t, m)
		listv1.RegisterListStringsServer(ch, &listFunc{list: func(_ *listv1.ListRequest, s grpc.ServerStreamingServer[listv1.ListResponse]) error {
			resp := &listv1.ListResponse{}
			for i := range n {
				resp.Strings = append(resp.Strings[:0], strs(i)...)
				if err := s.Send(resp); err != nil {
					return err
				}
			}
			return nil
		}})
		stream, err := listv1.NewListStringsClient(ch).List(timeoutCtx(t), &listv1.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got []*listv1.ListResponse
		for {
			r, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			i := len(got)
			if !slices.Equal(r.Strings, strs(i)) {
				t.Fatalf("message %d arrived as %q, want %q", i, r.Strings, strs(i))
			}
			if i%2 == 0 { // the others are kept as they came
				r.Strings[0] = "changed"
				r.Strings = append(r.Strings, "added")
			}
			got = append(got, r)
		}
		if len(got) != n {
			t.Fatalf("received %d messages, want %d", len(got), n)
		}
		for i, r := range got {
			want := strs(i)
			if i%2 == 0 {
				want = []string{"changed", want[1], "added"}
			}
			if !slices.Equal(r.Strings, want) {
				t.Fatalf("message %d is %q once all arrived, want %q", i, r.Strings, want)
			}
		}

		// Requests too: a bidi handler keeps what it received while the
		// client sends on.
		result := make(chan error, 1)
		client, _ := newEcho(t, m, &funcEcho{update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			var kept []*echov1.EchoRequest
			for {
				req, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				req.Text += "!"
				kept = append(kept, req)
			}
			for i, req := range kept {
				if want := fmt.Sprintf("r%d!", i); req.Text != want {
					result <- fmt.Errorf("request %d is %q once all arrived, want %q", i, req.Text, want)
					return nil
				}
			}
			result <- nil
			return nil
		}})
		bidi, err := client.Update(timeoutCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		req := &echov1.EchoRequest{}
		for i := range n {
			req.Text = fmt.Sprintf("r%d", i)
			if err := bidi.Send(req); err != nil {
				t.Fatal(err)
			}
		}
		if err := bidi.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := bidi.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("Recv after the handler returned: %v, want io.EOF", err)
		}
		if err := receive(t, result, "the handler's check"); err != nil {
			t.Fatal(err)
		}
	})
}
