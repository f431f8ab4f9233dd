package inproc_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
)

// reuseCount is how many messages a reusing sender sends: more than a
// window, so that some wait in the queue while the sender changes its
// message.
const reuseCount = 200

// numbers is "0".."n-1".
func numbers(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}

// TestSenderReusesMessage sends one message object over and over, changed
// between sends, as most streaming loops do with grpc-go, where SendMsg
// serializes the message before it returns. With Clone the receiver must
// get every value as it was when sent; with Share the loop breaks gRPC's
// rule not to change a message after SendMsg, so the test runs it with
// CallCopy(Clone) there, which must protect it as well. Under -race this
// also proves the sender's later writes do not race with the receiver.
func TestSenderReusesMessage(t *testing.T) {
	want := numbers(reuseCount)
	forEachMode(t, func(t *testing.T, m testMode) {
		var opts []grpc.CallOption
		if isShare(t, m) {
			opts = []grpc.CallOption{inproc.CallCopy(inproc.Clone)}
		}
		t.Run("dir=client-stream", func(t *testing.T) {
			got := make(chan []string, 1)
			c, _ := newEcho(t, m, &funcEcho{collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
				var texts []string
				for {
					r, err := s.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						return err
					}
					texts = append(texts, r.GetText())
				}
				got <- texts
				return s.SendAndClose(&echov1.EchoResponse{})
			}})
			s, err := c.Collect(timeoutCtx(t), opts...)
			if err != nil {
				t.Fatal(err)
			}
			req := &echov1.EchoRequest{}
			for i := range reuseCount {
				req.Text = strconv.Itoa(i)
				if err := s.Send(req); err != nil {
					t.Fatal(err)
				}
			}
			req.Text = "changed after the last send"
			if _, err := s.CloseAndRecv(); err != nil {
				t.Fatal(err)
			}
			if g := receive(t, got, "the handler's texts"); !slices.Equal(g, want) {
				t.Errorf("the handler received %s, want 0..%d in order", summary(g), reuseCount-1)
			}
		})
		t.Run("dir=server-stream", func(t *testing.T) {
			c, _ := newEcho(t, m, &funcEcho{expand: func(_ *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
				resp := &echov1.EchoResponse{}
				for i := range reuseCount {
					resp.Text = strconv.Itoa(i)
					if err := s.Send(resp); err != nil {
						return err
					}
				}
				resp.Text = "changed after the last send"
				return nil
			}})
			s, err := c.Expand(timeoutCtx(t), &echov1.EchoRequest{}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			var g []string
			for {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				g = append(g, r.GetText())
			}
			if !slices.Equal(g, want) {
				t.Errorf("the client received %s, want 0..%d in order", summary(g), reuseCount-1)
			}
		})
		t.Run("dir=bidi-half-duplex", func(t *testing.T) {
			const n = 50 // within one window each way: all sent, then all read
			c, _ := newEcho(t, m, &funcEcho{})
			s, err := c.Update(timeoutCtx(t), opts...)
			if err != nil {
				t.Fatal(err)
			}
			req := &echov1.EchoRequest{}
			for i := range n {
				req.Text = strconv.Itoa(i)
				if err := s.Send(req); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.CloseSend(); err != nil {
				t.Fatal(err)
			}
			req.Text = "changed after CloseSend"
			var g []string
			for {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				g = append(g, r.GetText())
			}
			if !slices.Equal(g, numbers(n)) {
				t.Errorf("the client received %s, want 0..%d in order", summary(g), n-1)
			}
		})
		t.Run("dir=request-of-server-stream", func(t *testing.T) {
			// The request of a server-streaming call is sent before the
			// generated method returns; changing it then must not reach a
			// handler that reads it later.
			for i := range 50 {
				release := make(chan struct{})
				c, _ := newEcho(t, m, &funcEcho{expand: func(req *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
					return s.Send(&echov1.EchoResponse{Text: req.GetText()})
				}}, inproc.WithServerStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
					<-release // the handler reads its request only after the client changed it
					return h(srv, ss)
				}))
				req := &echov1.EchoRequest{Text: "original"}
				ctx, cancel := context.WithCancel(timeoutCtx(t))
				s, err := c.Expand(ctx, req, opts...)
				if err != nil {
					t.Fatal(err)
				}
				req.Text = "changed " + strconv.Itoa(i)
				close(release)
				r, err := s.Recv()
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if r.GetText() != "original" {
					t.Fatalf("round %d: the handler saw %q, want the request as it was sent", i, r.GetText())
				}
			}
		})
	})
}

// summary shows a list of texts briefly: its length and the first wrong
// ones.
func summary(texts []string) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(texts)) + " texts")
	wrong := 0
	for i, s := range texts {
		if s != strconv.Itoa(i) {
			if wrong < 5 {
				b.WriteString(", [" + strconv.Itoa(i) + "]=" + strconv.Quote(s))
			}
			wrong++
		}
	}
	b.WriteString(", " + strconv.Itoa(wrong) + " wrong")
	return b.String()
}
