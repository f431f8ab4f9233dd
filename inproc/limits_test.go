package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	echov1 "github.com/localgrpc/localgrpc/gen/echo/v1"
	listv1 "github.com/localgrpc/localgrpc/gen/list/v1"
	"github.com/localgrpc/localgrpc/inproc"
	"github.com/localgrpc/localgrpc/internal/zoo/opaque"
	"github.com/localgrpc/localgrpc/internal/zoo/open3"
	"github.com/localgrpc/localgrpc/internal/zoo/proto2"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/apipb"
	"google.golang.org/protobuf/types/known/sourcecontextpb"
	"google.golang.org/protobuf/types/known/typepb"
)

// shapeEcho is an Echo server whose responses are what answer makes of
// each request's text: Get and Collect answer the first request, Expand
// and Update every one.
func shapeEcho(answer func(string) string) *funcEcho {
	return &funcEcho{
		get: func(_ context.Context, r *echov1.EchoRequest) (*echov1.EchoResponse, error) {
			return &echov1.EchoResponse{Text: answer(r.GetText())}, nil
		},
		expand: func(r *echov1.EchoRequest, s grpc.ServerStreamingServer[echov1.EchoResponse]) error {
			return s.Send(&echov1.EchoResponse{Text: answer(r.GetText())})
		},
		collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			var first *echov1.EchoRequest
			for {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				if first == nil {
					first = r
				}
			}
			return s.SendAndClose(&echov1.EchoResponse{Text: answer(first.GetText())})
		},
		update: func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error {
			for {
				r, err := s.Recv()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := s.Send(&echov1.EchoResponse{Text: answer(r.GetText())}); err != nil {
					return err
				}
			}
		},
	}
}

// answerAs answers "size=N" with N bytes and "utf8=bad" with invalid UTF-8;
// anything else with itself.
func answerAs(text string) string {
	if n, ok := strings.CutPrefix(text, "size="); ok {
		size, _ := strconv.Atoi(n)
		return strings.Repeat("x", size)
	}
	if text == "utf8=bad" {
		return "\xff"
	}
	return "ok"
}

// TestLimitsAsOverSocket sends what a socket refuses (messages over
// grpc-go's default 4 MiB receive limit, over the server's configured
// limits, strings that are not UTF-8) in each direction and each kind of
// method, and checks that every mode refuses it with the code grpc-go over
// a socket gives, which the test asks grpc-go for first, and that what a
// socket accepts is accepted.
func TestLimitsAsOverSocket(t *testing.T) {
	const (
		defaultLimit = 4 << 20
		setLimit     = 1000
	)
	big := func(n int) string { return strings.Repeat("y", n) }
	cases := []struct {
		name    string
		request string
		server  []grpc.ServerOption
		inproc  []inproc.Option
		want    codes.Code
	}{
		{"request=default-limit", big(defaultLimit - 8), nil, nil, codes.OK},
		{"request=over-default-limit", big(defaultLimit + 1), nil, nil, codes.ResourceExhausted},
		{"response=default-limit", "size=" + strconv.Itoa(defaultLimit-8), nil, nil, codes.OK},
		{"response=over-default-limit", "size=" + strconv.Itoa(defaultLimit+1), nil, nil, codes.ResourceExhausted},
		{"request=at-server-limit", big(setLimit - 3), []grpc.ServerOption{grpc.MaxRecvMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxRecvMsgSize(setLimit)}, codes.OK},
		{"request=over-server-limit", big(setLimit - 2), []grpc.ServerOption{grpc.MaxRecvMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxRecvMsgSize(setLimit)}, codes.ResourceExhausted},
		{"response=at-server-limit", "size=" + strconv.Itoa(setLimit-3), []grpc.ServerOption{grpc.MaxSendMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxSendMsgSize(setLimit)}, codes.OK},
		{"response=over-server-limit", "size=" + strconv.Itoa(setLimit-2), []grpc.ServerOption{grpc.MaxSendMsgSize(setLimit)}, []inproc.Option{inproc.WithServerMaxSendMsgSize(setLimit)}, codes.ResourceExhausted},
		{"request=invalid-utf8", "\xffbad", nil, nil, codes.Internal},
		{"response=invalid-utf8", "utf8=bad", nil, nil, codes.Internal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := shapeEcho(answerAs)
			ref := echov1.NewEchoClient(realGRPC(t, func(r grpc.ServiceRegistrar) { echov1.RegisterEchoServer(r, srv) }, tc.server, nil))
			for _, kind := range textKinds {
				_, err := kind.call(timeoutCtx(t), ref, tc.request)
				if got := status.Code(err); got != tc.want {
					t.Fatalf("reference: grpc-go gives %v for %s, the test expects %v", err, kind.name, tc.want)
				}
			}
			forEachMode(t, func(t *testing.T, m testMode) {
				c, _ := newEcho(t, m, srv, tc.inproc...)
				for _, kind := range textKinds {
					_, err := kind.call(timeoutCtx(t), c, tc.request)
					if got := status.Code(err); got != tc.want {
						t.Errorf("%s: %v, want code %v as grpc-go gives", kind.name, err, tc.want)
					}
				}
			})
		})
	}
}

// TestClientSendOverLimitEndsCallAsGRPC: a client's Send over its own
// limit (grpc.MaxCallSendMsgSize), then CloseSend and Recv. grpc-go's
// failed Send ends the call (stream.go clientStream.SendMsg finishes it
// and resets the stream): its CloseSend sends no end of input, and the
// handler's Recv fails with Canceled, never io.EOF, so that a handler
// that reads to the end does not take a truncated request for a whole
// one. An Inline handler whose client leaves before driving it never
// runs (see Inline); one that runs must see the same.
func TestClientSendOverLimitEndsCallAsGRPC(t *testing.T) {
	for _, kind := range []struct {
		name string
		open func(ctx context.Context, c echov1.EchoClient) (grpc.ClientStream, error)
	}{
		{"client-stream", func(ctx context.Context, c echov1.EchoClient) (grpc.ClientStream, error) { return c.Collect(ctx) }},
		{"bidi", func(ctx context.Context, c echov1.EchoClient) (grpc.ClientStream, error) { return c.Update(ctx) }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			handlerSaw := make(chan string, 1)
			recvAll := func(s grpc.ServerStream) error {
				for n := 0; ; n++ {
					if err := s.RecvMsg(&echov1.EchoRequest{}); err != nil {
						what := "io.EOF"
						if !errors.Is(err, io.EOF) {
							what = status.Code(err).String()
						}
						handlerSaw <- fmt.Sprintf("%d messages, then %s", n, what)
						return err
					}
				}
			}
			srv := &funcEcho{
				collect: func(s grpc.ClientStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error { return recvAll(s) },
				update:  func(s grpc.BidiStreamingServer[echov1.EchoRequest, echov1.EchoResponse]) error { return recvAll(s) },
			}
			run := func(t *testing.T, c echov1.EchoClient) string {
				s, err := kind.open(timeoutCtx(t), c)
				if err != nil {
					t.Fatal(err)
				}
				sendErr := s.SendMsg(&echov1.EchoRequest{Text: strings.Repeat("a", 200)})
				closeErr := s.CloseSend()
				recvErr := s.RecvMsg(&echov1.EchoResponse{})
				return fmt.Sprintf("send %v, close-send %v, recv %v", status.Code(sendErr), closeErr, status.Code(recvErr))
			}
			limit := grpc.MaxCallSendMsgSize(100)
			want := run(t, echoOracle(t, srv, nil, grpc.WithDefaultCallOptions(limit)))
			wantSaw := receive(t, handlerSaw, "grpc-go's handler to end")
			t.Logf("grpc-go: %s; its handler saw %s", want, wantSaw)
			forEachMode(t, func(t *testing.T, m testMode) {
				c, ch := newEcho(t, m, srv, inproc.WithDefaultCallOptions(limit))
				if got := run(t, c); got != want {
					t.Errorf("inproc: %s\ngrpc-go: %s", got, want)
				}
				ch.GracefulStop() // the handler, if it runs, has ended
				select {
				case saw := <-handlerSaw:
					if saw != wantSaw {
						t.Errorf("the handler saw %s; grpc-go's %s", saw, wantSaw)
					}
				default:
					if isIsolated(t, m) {
						t.Errorf("the handler did not run")
					}
				}
			})
		})
	}
}

// listOfSize returns a ListResponse, of a type the size plans measure,
// whose encoding is exactly n bytes: a list of strings and unknown
// fields.
func listOfSize(t *testing.T, n int) *listv1.ListResponse {
	t.Helper()
	m := &listv1.ListResponse{Strings: []string{strings.Repeat("s", 1000), "é"}}
	rest := n - proto.Size(m)
	// An unknown bytes field of tag 99 (2 bytes) and a length prefix.
	for body := rest - 2 - 1; body > 0; body-- {
		if 2+protowire.SizeBytes(body) == rest {
			m.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), make([]byte, body)))
			break
		}
	}
	if proto.Size(m) != n {
		t.Fatalf("made %d bytes, want %d", proto.Size(m), n)
	}
	return m
}

// TestLimitsOnPlannedSizes: responses and requests measured by
// the size plans (repeated strings and unknown fields) right at the 4 MiB
// default receive limit, each call after one that set the kept plan, get
// the codes grpc-go gives: OK at the limit, ResourceExhausted one byte
// over, both ways.
func TestLimitsOnPlannedSizes(t *testing.T) {
	const limit = 4 << 20
	svc := func() *anySvc {
		return &anySvc{
			newReq: func() proto.Message { return &listv1.ListResponse{} },
			resp: func(req proto.Message) (proto.Message, error) {
				l := req.(*listv1.ListResponse)
				if len(l.Strings) == 0 {
					return nil, status.Error(codes.InvalidArgument, "empty")
				}
				if strings.HasPrefix(l.Strings[0], "small") {
					return &listv1.ListResponse{Strings: []string{"small"}}, nil
				}
				return listOfSize(t, limit+len(l.Strings)-2), nil // the request's list length says how far over
			},
		}
	}
	run := func(cc grpc.ClientConnInterface) []string {
		var out []string
		for _, req := range []*listv1.ListResponse{
			{Strings: []string{"small"}},
			listOfSize(t, limit),
			listOfSize(t, limit+1),
			{Strings: []string{"big", "x"}},        // response at the limit
			{Strings: []string{"big", "x", "y"}},   // one over
			{Strings: []string{"small", "x", "y"}}, // the plan kept is the small one's
			{Strings: []string{"big", "x", "y"}},
		} {
			reply := &listv1.ListResponse{}
			err := cc.Invoke(context.Background(), anyUnary, req, reply)
			out = append(out, fmt.Sprintf("%v/%d", status.Code(err), proto.Size(reply)))
		}
		return out
	}
	want := run(anyReference(t, svc()))
	forEachMode(t, func(t *testing.T, m testMode) {
		ch := newChannel(t, m)
		ch.RegisterService(anyDesc, svc())
		if got := run(ch); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("inproc %v\ngrpc-go %v", got, want)
		}
	})
}

// oracleSized is a message of some shape and what its receivers
// allocate.
type oracleSized struct {
	name string
	msg  func() any
	recv func() any
	size int
}

func oracleSizedMessages() []oracleSized {
	typ := func() any {
		m := &typepb.Type{Name: strings.Repeat("n", 300), SourceContext: &sourcecontextpb.SourceContext{FileName: "é"}, Syntax: typepb.Syntax(-1)}
		for i := range 40 {
			m.Fields = append(m.Fields, &typepb.Field{Kind: typepb.Field_Kind(-i), Number: int32(-i), Name: strings.Repeat("f", i*3),
				Options: []*typepb.Option{{Name: "o", Value: &anypb.Any{TypeUrl: "u", Value: make([]byte, 200+i)}}, {}}})
		}
		m.Oneofs = []string{"a", "", strings.Repeat("b", 130)}
		return m
	}
	cases := []oracleSized{
		{name: "typepb", msg: typ, recv: func() any { return &typepb.Type{} }},
		{name: "apipb", msg: func() any {
			m := &apipb.Api{Name: "api", Version: strings.Repeat("v", 127)}
			for i := range 30 {
				m.Methods = append(m.Methods, &apipb.Method{Name: strings.Repeat("m", 128+i), RequestTypeUrl: "r", ResponseStreaming: true, Syntax: typepb.Syntax(-i)})
				m.Mixins = append(m.Mixins, &apipb.Mixin{Name: "x"})
			}
			return m
		}, recv: func() any { return &apipb.Api{} }},
		{name: "status", msg: func() any {
			m := &statuspb.Status{Code: -1, Message: strings.Repeat("s", 1000)}
			for i := range 50 {
				m.Details = append(m.Details, &anypb.Any{TypeUrl: strings.Repeat("t", i), Value: make([]byte, i*7)})
			}
			return m
		}, recv: func() any { return &statuspb.Status{} }},
		{name: "open3", msg: func() any {
			m := &open3.Tree{S: strings.Repeat("s", 500), Leaf: &open3.Leaf{B: make([]byte, 300)}, ByName: map[string]*open3.Leaf{"k": {S: "v"}}, Ds: make([]float64, 40)}
			for i := range 20 {
				m.Leaves = append(m.Leaves, &open3.Leaf{D: float64(i), S: strings.Repeat("x", 10*i)})
			}
			return m
		}, recv: func() any { return &open3.Tree{} }},
		{name: "proto2", msg: func() any {
			m := &proto2.Record{Name: proto.String(strings.Repeat("r", 400)), Grp: &proto2.Record_Grp{Must: proto.String("m")}}
			for i := range 10 {
				m.Kids = append(m.Kids, &proto2.Record{Name: proto.String(strings.Repeat("k", 20*i))})
			}
			proto.SetExtension(m, proto2.E_Note, strings.Repeat("e", 150))
			return m
		}, recv: func() any { return &proto2.Record{} }},
		{name: "dynamic", msg: func() any {
			b, _ := proto.Marshal(typ().(proto.Message))
			m := dynamicpb.NewMessage((&typepb.Type{}).ProtoReflect().Descriptor())
			if err := proto.Unmarshal(b, m); err != nil {
				panic(err)
			}
			return m
		}, recv: func() any { return &typepb.Type{} }},
		{name: "typepb-unknown", msg: func() any {
			m := typ().(*typepb.Type)
			m.ProtoReflect().SetUnknown([]byte{0xf8, 0x0f, 0x01})
			m.Fields[3].ProtoReflect().SetUnknown([]byte{0xf8, 0x0f, 0x02})
			return m
		}, recv: func() any { return &typepb.Type{} }},
		{name: "opaque", msg: func() any {
			var kids []*opaque.Node
			for i := range 30 {
				kids = append(kids, opaque.Node_builder{Label: proto.String(strings.Repeat("l", i*9)), Data: make([]byte, i)}.Build())
			}
			return opaque.Holder_builder{Kids: kids, S: proto.String("s"), Names: []string{"a", "b"}}.Build()
		}, recv: func() any { return &opaque.Holder{} }},
		{name: "self-coding", msg: func() any { return &selfCoded{Text: strings.Repeat("t", 3000), Data: make([]byte, 4000)} },
			recv: func() any { return &selfCoded{} }},
	}
	for i := range cases {
		switch m := cases[i].msg().(type) {
		case proto.Message:
			cases[i].size = proto.Size(m)
		case protoadapt.MessageV1:
			cases[i].size = proto.Size(protoadapt.MessageV2Of(m))
		}
	}
	return cases
}

// oracleLimitSvc echoes whatever it gets, on both methods, receiving
// into what recv makes.
func oracleLimitSvc(recv func() any) *oracleRawSvc {
	return &oracleRawSvc{newIn: recv, out: func(in any) any { return in }, saw: make(chan string, 64)}
}

// oracleLimitRun sends msg by the unary method and by the bidi one, and
// tells the codes each ends with.
func oracleLimitRun(cc grpc.ClientConnInterface, c oracleSized, opts ...grpc.CallOption) string {
	reply := c.recv()
	unary := cc.Invoke(context.Background(), "/oracle.Raw/Unary", c.msg(), reply, opts...)
	stream := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		s, err := cc.NewStream(ctx, anyBidiDesc, "/oracle.Raw/Bidi", opts...)
		if err != nil {
			return err
		}
		if err := s.SendMsg(c.msg()); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("send: %w", err)
		}
		if err := s.CloseSend(); err != nil {
			return err
		}
		for {
			if err := s.RecvMsg(c.recv()); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}()
	return fmt.Sprintf("unary %v, stream %v", status.Code(unary), status.Code(stream))
}

// TestHandoverLimitsAtTheEdge: messages of every strategy (flat
// well-known types with nested messages and lists of them, open and
// proto2 messages, a dynamic one, a self-coding one) exactly at each of
// the four limits and one byte over, both ways, unary and streaming:
// the codes must be grpc-go's.
func TestHandoverLimitsAtTheEdge(t *testing.T) {
	for _, c := range oracleSizedMessages() {
		t.Run(c.name, func(t *testing.T) {
			for _, over := range []int{0, 1} {
				n := c.size - over
				limits := []struct {
					name  string
					sopt  grpc.ServerOption
					iopt  inproc.Option
					copts []grpc.CallOption
				}{
					{"client-recv", nil, nil, []grpc.CallOption{grpc.MaxCallRecvMsgSize(n)}},
					{"client-send", nil, nil, []grpc.CallOption{grpc.MaxCallSendMsgSize(n)}},
					{"server-recv", grpc.MaxRecvMsgSize(n), inproc.WithServerMaxRecvMsgSize(n), nil},
					{"server-send", grpc.MaxSendMsgSize(n), inproc.WithServerMaxSendMsgSize(n), nil},
				}
				for _, l := range limits {
					t.Run(fmt.Sprintf("%s/%d-of-%d", l.name, n, c.size), func(t *testing.T) {
						var sopts []grpc.ServerOption
						var iopts []inproc.Option
						if l.sopt != nil {
							sopts, iopts = []grpc.ServerOption{l.sopt}, []inproc.Option{l.iopt}
						}
						ref := realGRPC(t, func(r grpc.ServiceRegistrar) { r.RegisterService(oracleRawDesc, oracleLimitSvc(c.recv)) }, sopts, nil)
						want := oracleLimitRun(ref, c, l.copts...)
						forEachMode(t, func(t *testing.T, m testMode) {
							ch := newChannel(t, m, iopts...)
							ch.RegisterService(oracleRawDesc, oracleLimitSvc(c.recv))
							// Twice: the second finds the plan the first kept.
							for range 2 {
								if got := oracleLimitRun(ch, c, l.copts...); got != want {
									t.Errorf("inproc %s; grpc-go %s", got, want)
								}
							}
						})
					})
				}
			}
		})
	}
}
