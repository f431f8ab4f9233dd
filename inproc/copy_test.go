package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"
)

// A handOver is what the test saw of one message passed from a sender to a
// receiver, once the receiver (or, for requests, the handler) changed its
// message.
type handOver struct {
	what          string
	contentOK     bool // the receiver got what was sent
	samePointer   bool // the receiver got the sender's message itself
	nestedVisible bool // the change of a nested field reached the other side
	topVisible    bool // the change of a top-level field reached the other side
	noNested      bool // the message has no nested field to share
}

// copyServer is a TestService and ListStrings server that changes every
// request it receives, nested and top-level fields, and hands the test
// every message it receives and sends.
type copyServer struct {
	testgrpc.UnimplementedTestServiceServer
	listv1.UnimplementedListStringsServer
	got  chan proto.Message // what the handler received, after changing it
	sent chan proto.Message // what the handler sent
}

func newCopyServer() *copyServer {
	return &copyServer{got: make(chan proto.Message, 16), sent: make(chan proto.Message, 16)}
}

func payload(s string) *testgrpc.Payload { return &testgrpc.Payload{Body: []byte(s)} }

// tamper changes a received request: a byte of its nested payload to 'S',
// and one top-level field.
func tamper(m proto.Message) {
	switch m := m.(type) {
	case *testgrpc.SimpleRequest:
		m.Payload.Body[0] = 'S'
		m.ResponseSize = -1
	case *testgrpc.StreamingInputCallRequest:
		m.Payload.Body[0] = 'S'
		m.ExpectCompressed = &testgrpc.BoolValue{Value: true}
	case *testgrpc.StreamingOutputCallRequest:
		m.Payload.Body[0] = 'S'
		m.ResponseStatus = &testgrpc.EchoStatus{Code: 1}
	default:
		panic(fmt.Sprintf("tamper: %T", m))
	}
}

// requestHandOver is what the client sees of req, which it sent and the
// handler received as got and changed.
func requestHandOver(what string, req, want, got proto.Message) handOver {
	h := handOver{what: what, samePointer: req == got}
	switch req := req.(type) {
	case *testgrpc.SimpleRequest:
		h.nestedVisible = req.Payload.Body[0] == 'S'
		h.topVisible = req.ResponseSize == -1
	case *testgrpc.StreamingInputCallRequest:
		h.nestedVisible = req.Payload.Body[0] == 'S'
		h.topVisible = req.ExpectCompressed != nil
	case *testgrpc.StreamingOutputCallRequest:
		h.nestedVisible = req.Payload.Body[0] == 'S'
		h.topVisible = req.ResponseStatus != nil
	}
	// The handler changed its copy: compare it with want changed alike.
	want = proto.Clone(want)
	tamper(want)
	h.contentOK = proto.Equal(got, want)
	return h
}

// responseHandOver checks that the client's resp is what was sent, changes
// it, and reports whether the change reached sent, the handler's message.
func responseHandOver(what string, resp, sent proto.Message) handOver {
	h := handOver{what: what, samePointer: resp == sent, contentOK: proto.Equal(resp, sent)}
	switch resp := resp.(type) {
	case *testgrpc.SimpleResponse:
		resp.Payload.Body[0] = 'C'
		resp.Username = "changed"
		sent := sent.(*testgrpc.SimpleResponse)
		h.nestedVisible = sent.Payload.Body[0] == 'C'
		h.topVisible = sent.Username == "changed"
	case *testgrpc.StreamingOutputCallResponse:
		resp.Payload.Body[0] = 'C'
		resp.Payload = payload("replaced")
		sent := sent.(*testgrpc.StreamingOutputCallResponse)
		h.nestedVisible = sent.Payload.Body[0] == 'C'
		h.topVisible = string(sent.Payload.Body) == "replaced"
	case *testgrpc.StreamingInputCallResponse:
		resp.AggregatedPayloadSize = -1
		h.noNested = true
		h.topVisible = sent.(*testgrpc.StreamingInputCallResponse).AggregatedPayloadSize == -1
	case *listv1.ListResponse:
		resp.Strings[0] = "changed"
		resp.Strings = []string{"replaced", "x", "y"}
		sent := sent.(*listv1.ListResponse)
		h.nestedVisible = sent.Strings[0] == "changed"
		h.topVisible = sent.Strings[0] == "replaced"
	default:
		panic(fmt.Sprintf("responseHandOver: %T", resp))
	}
	return h
}

func (s *copyServer) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	tamper(req)
	s.got <- req
	resp := &testgrpc.SimpleResponse{Payload: payload("response"), Username: "server"}
	s.sent <- resp
	return resp, nil
}

func (s *copyServer) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testgrpc.StreamingOutputCallResponse]) error {
	tamper(req)
	s.got <- req
	for i := range 2 {
		resp := &testgrpc.StreamingOutputCallResponse{Payload: payload(fmt.Sprint("response ", i))}
		s.sent <- resp // before Send: an Inline handler may not run on after it
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

func (s *copyServer) StreamingInputCall(stream grpc.ClientStreamingServer[testgrpc.StreamingInputCallRequest, testgrpc.StreamingInputCallResponse]) error {
	n := 0
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n += len(req.GetPayload().GetBody())
		tamper(req)
		s.got <- req
	}
	resp := &testgrpc.StreamingInputCallResponse{AggregatedPayloadSize: int32(n)}
	s.sent <- resp
	return stream.SendAndClose(resp)
}

func (s *copyServer) FullDuplexCall(stream grpc.BidiStreamingServer[testgrpc.StreamingOutputCallRequest, testgrpc.StreamingOutputCallResponse]) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp := &testgrpc.StreamingOutputCallResponse{Payload: payload("re: " + string(req.GetPayload().GetBody()))}
		tamper(req)
		s.got <- req
		s.sent <- resp // before Send: an Inline handler may not run on after it
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

func (s *copyServer) List(_ *listv1.ListRequest, stream grpc.ServerStreamingServer[listv1.ListResponse]) error {
	for range 2 {
		resp := &listv1.ListResponse{Strings: []string{"a", "b", "c"}}
		s.sent <- resp // before Send: an Inline handler may not run on after it
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// copyCases exercise every kind of method in both directions.
var copyCases = []struct {
	name string
	run  func(t *testing.T, cc grpc.ClientConnInterface, srv *copyServer, opts []grpc.CallOption) []handOver
}{
	{"unary", func(t *testing.T, cc grpc.ClientConnInterface, srv *copyServer, opts []grpc.CallOption) []handOver {
		req := &testgrpc.SimpleRequest{Payload: payload("request"), ResponseSize: 7}
		want := proto.Clone(req)
		resp, err := testgrpc.NewTestServiceClient(cc).UnaryCall(timeoutCtx(t), req, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return []handOver{
			requestHandOver("request", req, want, receive(t, srv.got, "the request")),
			responseHandOver("response", resp, receive(t, srv.sent, "the response")),
		}
	}},
	{"server-stream", func(t *testing.T, cc grpc.ClientConnInterface, srv *copyServer, opts []grpc.CallOption) []handOver {
		req := &testgrpc.StreamingOutputCallRequest{Payload: payload("request")}
		want := proto.Clone(req)
		s, err := testgrpc.NewTestServiceClient(cc).StreamingOutputCall(timeoutCtx(t), req, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var hs []handOver
		for i := 0; ; i++ {
			resp, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, responseHandOver(fmt.Sprint("response ", i), resp, receive(t, srv.sent, "a response")))
		}
		return append(hs, requestHandOver("request", req, want, receive(t, srv.got, "the request")))
	}},
	{"server-stream/repeated-string", func(t *testing.T, cc grpc.ClientConnInterface, srv *copyServer, opts []grpc.CallOption) []handOver {
		s, err := listv1.NewListStringsClient(cc).List(timeoutCtx(t), &listv1.ListRequest{}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var hs []handOver
		for i := 0; ; i++ {
			resp, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return hs
			}
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, responseHandOver(fmt.Sprint("response ", i), resp, receive(t, srv.sent, "a response")))
		}
	}},
	{"client-stream", func(t *testing.T, cc grpc.ClientConnInterface, srv *copyServer, opts []grpc.CallOption) []handOver {
		s, err := testgrpc.NewTestServiceClient(cc).StreamingInputCall(timeoutCtx(t), opts...)
		if err != nil {
			t.Fatal(err)
		}
		var reqs, wants []proto.Message
		for i := range 2 {
			req := &testgrpc.StreamingInputCallRequest{Payload: payload(fmt.Sprint("request ", i))}
			reqs, wants = append(reqs, req), append(wants, proto.Clone(req))
			if err := s.Send(req); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := s.CloseAndRecv()
		if err != nil {
			t.Fatal(err)
		}
		var hs []handOver
		for i, req := range reqs {
			hs = append(hs, requestHandOver(fmt.Sprint("request ", i), req, wants[i], receive(t, srv.got, "a request")))
		}
		return append(hs, responseHandOver("response", resp, receive(t, srv.sent, "the response")))
	}},
	{"bidi", func(t *testing.T, cc grpc.ClientConnInterface, srv *copyServer, opts []grpc.CallOption) []handOver {
		s, err := testgrpc.NewTestServiceClient(cc).FullDuplexCall(timeoutCtx(t), opts...)
		if err != nil {
			t.Fatal(err)
		}
		var hs []handOver
		for i := range 2 {
			req := &testgrpc.StreamingOutputCallRequest{Payload: payload(fmt.Sprint("request ", i))}
			want := proto.Clone(req)
			if err := s.Send(req); err != nil {
				t.Fatal(err)
			}
			resp, err := s.Recv()
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs,
				requestHandOver(fmt.Sprint("request ", i), req, want, receive(t, srv.got, "a request")),
				responseHandOver(fmt.Sprint("response ", i), resp, receive(t, srv.sent, "a response")))
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("Recv at the end: %v, want io.EOF", err)
		}
		return hs
	}},
}

// TestCopyModes checks message ownership for every kind of method, both
// directions, with the channel's copy mode and with CallCopy overriding it.
// Clone: no change on one side, nested or not, reaches the other. Share:
// top-level fields are the receiver's own, nested memory is shared.
func TestCopyModes(t *testing.T) {
	overrides := []struct {
		name  string
		opts  []grpc.CallOption
		share func(channelShares bool) bool
	}{
		{"call=default", nil, func(channelShares bool) bool { return channelShares }},
		{"call=CallCopy(Clone)", []grpc.CallOption{inproc.CallCopy(inproc.Clone)}, func(bool) bool { return false }},
		{"call=CallCopy(Share)", []grpc.CallOption{inproc.CallCopy(inproc.Share)}, func(bool) bool { return true }},
	}
	forEachMode(t, func(t *testing.T, m testMode) {
		srv := newCopyServer()
		ch := newChannel(t, m)
		testgrpc.RegisterTestServiceServer(ch, srv)
		listv1.RegisterListStringsServer(ch, srv)
		for _, o := range overrides {
			share := o.share(isShare(t, m))
			for _, tc := range copyCases {
				t.Run(o.name+"/"+tc.name, func(t *testing.T) {
					hs := tc.run(t, ch, srv, o.opts)
					if len(hs) == 0 {
						t.Fatal("no message was passed")
					}
					for _, h := range hs {
						if !h.contentOK {
							t.Errorf("%s: the receiver did not get what was sent", h.what)
						}
						if h.samePointer {
							t.Errorf("%s: the receiver got the sender's message itself", h.what)
						}
						if h.topVisible {
							t.Errorf("%s: changing a top-level field reached the other side", h.what)
						}
						wantNested := share && !h.noNested
						if h.nestedVisible != wantNested {
							if share {
								t.Errorf("%s: changing a nested field did not reach the other side: with Share, nested memory must be shared", h.what)
							} else {
								t.Errorf("%s: changing a nested field reached the other side: with Clone, the receiver must get a deep copy", h.what)
							}
						}
					}
				})
			}
		}
	})
}

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
